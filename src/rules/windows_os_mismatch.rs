//! `windows-os-mismatch`: Windows container images on pods that do not select Windows
//! nodes, or whose Windows build (selector or NodePool AMI family) differs from the image's
//! LTSC version (karpenter-model §9).

use super::{Context, Findings, Placed, Rule};
use crate::diagnostic::Severity;
use crate::karpenter::pod;
use crate::karpenter::sim::Verdict;

declare_rule!(
    WindowsOsMismatch,
    "windows-os-mismatch",
    Error,
    "Windows container image without Windows node selection, or a Windows build that differs from the image's LTSC version"
);

const BUILD_LABEL: &str = "node.kubernetes.io/windows-build";

/// Whether an image reference is a Windows image, and its Windows build when the tag says.
pub fn windows_image(image: &str) -> Option<Option<(&'static str, &'static str)>> {
    let lower = image.to_ascii_lowercase();
    let windows = lower.starts_with("mcr.microsoft.com/windows")
        || lower.contains("servercore")
        || lower.contains("nanoserver")
        || lower.contains("ltsc20");
    if !windows {
        return None;
    }
    let tag = lower.rsplit_once(':').map(|(_, t)| t).unwrap_or("");
    let build = [
        ("ltsc2019", "10.0.17763"),
        ("1809", "10.0.17763"),
        ("ltsc2022", "10.0.20348"),
        ("ltsc2025", "10.0.26100"),
    ]
    .into_iter()
    .find(|(v, _)| tag.contains(v));
    Some(build)
}

impl Rule for WindowsOsMismatch {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        let obj = o.obj;
        let Some(spec) = obj.workload().and_then(|w| w.pod_spec()) else {
            return;
        };
        let Some(image) = spec
            .init_containers
            .iter()
            .chain(&spec.containers)
            .filter_map(|c| c.image.as_ref())
            .find(|i| windows_image(&i.value).is_some())
        else {
            return;
        };
        let build = windows_image(&image.value).flatten();
        let image_span = obj.span(image);
        let Ok(attempts) = pod::attempts(obj, spec) else {
            return;
        };
        let Some(strict) = attempts.last() else {
            return;
        };
        let selects_windows = strict
            .requirements
            .get("kubernetes.io/os")
            .is_some_and(|r| !r.is_complement() && r.has("windows") && !r.has("linux"));
        if !selects_windows {
            out.push(
                META.finding_with(Severity::Warning, obj,
                    image_span,
                    format!(
                        "\"{}\" is a Windows image but the pod does not select `kubernetes.io/os: windows`: on a Linux node the pull fails with `no match for platform in manifest`",
                        image.value
                    ),
                )
                .label("Windows image")
                .help("add `kubernetes.io/os: windows` to the pod's `nodeSelector` (and a toleration for the Windows NodePool's taint, if it has one)"),
            );
        }
        let Some((ltsc, build)) = build else { return };
        if let Some(r) = strict.requirements.get(BUILD_LABEL)
            && !r.is_complement()
            && !r.has(build)
        {
            let span = strict.spans.get(BUILD_LABEL).copied().unwrap_or(image_span);
            let wanted: Vec<&str> = r.values().iter().map(String::as_str).collect();
            out.push(
                META.finding(obj,
                    span,
                    format!(
                        "the pod selects {BUILD_LABEL} [{}] but image \"{}\" is {ltsc} (build {build}): the pull fails with `no match for platform in manifest`",
                        wanted.join(" "),
                        image.value
                    ),
                )
                .label(format!("not the {ltsc} build {build}"))
                .help(format!(
                    "select `{BUILD_LABEL}: \"{build}\"`, or use the image tag built for the selected Windows version"
                ))
                .related(obj, image_span, format!("{ltsc} image")),
            );
            return;
        }
        // A pod that pins its build never lands on a NodePool of another build.
        if strict.requirements.has(BUILD_LABEL) {
            return;
        }
        let verdict = o.verdict();
        if let (Some(sim), Some(Verdict::Schedules(p))) = (&cx.sim, verdict) {
            let pool = &sim.pools[p.pool];
            if pool.node_class_known
                && let Some(node_build) = pool.family.windows_build()
                && node_build != build
            {
                out.push(
                    META.finding(obj,
                        image_span,
                        format!(
                            "image \"{}\" is {ltsc} (build {build}) but NodePool \"{}\" launches {} nodes (build {node_build}): the pull fails with `no match for platform in manifest`",
                            image.value,
                            pool.name,
                            pool.family.as_str()
                        ),
                    )
                    .label(format!("{ltsc} image"))
                    .help(format!(
                        "use the image tag built for {} (or a multi-arch manifest), or select `{BUILD_LABEL}: \"{build}\"` and give it a NodePool with the matching Windows AMI family",
                        pool.family.as_str()
                    ))
                    .related(
                        pool.obj,
                        pool.name_span(),
                        format!(
                            "NodePool \"{}\" uses the {} AMI family",
                            pool.name,
                            pool.family.as_str()
                        ),
                    ),
                );
            }
        }
    }
}
