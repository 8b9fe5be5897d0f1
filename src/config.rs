//! Configuration: `.karplint.yaml`, found above the linted paths (the CLI asks [`discover`]
//! from each) or named with `--config`, read before the pipeline starts.
//!
//! The file is strict on purpose: an unknown key, an unknown rule id or a bad level is an
//! error with a span in the config file, rendered by miette, and the run stops with exit
//! code 2, because a typo in a config silently disabling nothing is worse than a failed run.
//! Paths in `context:` and `cluster.instanceTypes` are relative to the file's directory.
//! Command-line flags override what the file says; merging happens in the CLI.
//!
//! An error quotes at most one short excerpt of the offending line, never the file: a
//! committed `.karplint.yaml` may be a link to `/proc/self/environ` or `/etc/passwd`, and
//! the error is printed in a CI log anyone can read.

use crate::diagnostic::Severity;
use crate::karpenter::version::KarpenterVersion;
use crate::model::de::{Spanned, SpannedMap};
use miette::{Diagnostic, MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file name looked for in a linted path's directory and its parents.
pub const FILE_NAME: &str = ".karplint.yaml";

/// What a rule is set to: not reported, or reported at a severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Off,
    On(Severity),
}

impl Level {
    /// Parses a level; `false` is how a YAML 1.1 reader sees an unquoted `off`.
    pub fn parse(s: &str) -> Option<Level> {
        Some(match s {
            "off" | "false" => Level::Off,
            "info" => Level::On(Severity::Info),
            "warning" => Level::On(Severity::Warning),
            "error" => Level::On(Severity::Error),
            _ => return None,
        })
    }
}

/// `failOn:` / `--fail-on`: the lowest severity that makes the exit code 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

impl FailOn {
    pub fn parse(s: &str) -> Option<FailOn> {
        Some(match s {
            "error" => FailOn::Error,
            "warning" => FailOn::Warning,
            "info" => FailOn::Info,
            "never" => FailOn::Never,
            _ => return None,
        })
    }

    pub fn threshold(self) -> Option<Severity> {
        match self {
            FailOn::Error => Some(Severity::Error),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Info => Some(Severity::Info),
            FailOn::Never => None,
        }
    }
}

/// Facts about the cluster that manifests cannot tell (`cluster:`). Validated and carried
/// to the rules; the simulator reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterSection {
    pub region: Option<String>,
    pub zones: Vec<String>,
    pub node_groups: Vec<NodeGroup>,
    pub subnets: Vec<Subnet>,
    /// A `aws ec2 describe-instance-types` JSON file, resolved against the config's directory.
    pub instance_types: Option<PathBuf>,
    /// Admission plugins the API server runs (`admission:`); EKS's by default.
    pub admission: crate::karpenter::pod::Admission,
    /// Add-ons installed outside the manifests (`addons:`).
    pub addons: Vec<String>,
}

/// A managed (non-Karpenter) node group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeGroup {
    pub name: String,
    pub instance_type: String,
    pub count: u32,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<NodeGroupTaint>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeGroupTaint {
    pub key: String,
    pub value: Option<String>,
    pub effect: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subnet {
    pub id: String,
    pub zone: String,
    pub available_ipv4: u64,
}

/// A config file, validated.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Where it was read from.
    pub path: PathBuf,
    /// Rule id → level, from `rules:`.
    pub rules: BTreeMap<String, Level>,
    pub exclude: Vec<String>,
    pub include: Vec<String>,
    /// Already resolved against the config file's directory.
    pub context: Vec<PathBuf>,
    pub fail_on: Option<FailOn>,
    /// `requireNodePools: true`: a run whose scheduling rules could not run (no NodePool
    /// read) exits 2.
    pub require_node_pools: Option<bool>,
    pub cluster: Option<ClusterSection>,
    /// `kustomize: auto|always|off`.
    pub kustomize: Option<crate::kustomize::Mode>,
    /// `kustomizeBin`: the render tool, resolved against the config's directory (used only
    /// when outside the linted trees).
    pub kustomize_bin: Option<PathBuf>,
    /// `kustomizeTimeout`: seconds for all renders of a run.
    pub kustomize_timeout: Option<u64>,
    /// `kustomizeRoots`: kustomization directories rendered as roots although other
    /// kustomizations include them (bases that are also applied on their own).
    pub kustomize_roots: Vec<PathBuf>,
    /// `karpenter.version`: the Karpenter release whose behaviour applies.
    pub karpenter_version: Option<KarpenterVersion>,
    /// `karpenter.featureGates.nodeOverlay`: `false` when the installation runs with the
    /// `NodeOverlay` feature gate off, so NodeOverlays change no instance type.
    pub node_overlay: Option<bool>,
    /// `clusters:`: the directories of each cluster a repository keeps side by side.
    pub clusters: Vec<ClusterEntry>,
}

/// One `clusters:` entry: a cluster's files, judged against its own NodePools and
/// cluster objects only.
#[derive(Debug, Clone, Default)]
pub struct ClusterEntry {
    pub name: String,
    /// Its linted directories and files, resolved against the config's directory.
    pub paths: Vec<PathBuf>,
    /// Its context directories (read, never reported on), resolved the same way.
    pub context: Vec<PathBuf>,
    /// Its own `cluster:` facts, in place of the top-level section.
    pub cluster: Option<ClusterSection>,
}

/// Why a config could not be used. Rendered by miette with the offending span.
#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    #[diagnostic(code(karplint::config))]
    Io { path: String, message: String },
    /// Not text a YAML config could hold (a NUL or other control byte): nothing is quoted.
    #[error("{path}: not a YAML config (control character at byte {offset})")]
    #[diagnostic(
        code(karplint::config),
        help("point --config at a .karplint.yaml file; is it a link to something else?")
    )]
    NotText { path: String, offset: usize },
    /// An error in a file nothing may be quoted from: one that is not YAML at all, or one
    /// reached through a symbolic link that leaves its repository (`~/.git-credentials`).
    #[error("{path}: {what} at line {line}, column {column}")]
    #[diagnostic(code(karplint::config), help("{help}"))]
    Unquoted {
        path: String,
        what: String,
        line: usize,
        column: usize,
        help: String,
    },
    #[error("{message}")]
    #[diagnostic(code(karplint::config))]
    Invalid {
        message: String,
        #[source_code]
        src: Excerpt,
        #[label("{label}")]
        span: SourceSpan,
        label: String,
        #[help]
        help: Option<String>,
    },
}

// --- raw, spanned shape of the file -------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct RawConfig {
    rules: SpannedMap,
    exclude: Vec<String>,
    include: Vec<String>,
    context: Vec<String>,
    fail_on: Option<Spanned<String>>,
    require_node_pools: Option<bool>,
    cluster: Option<RawCluster>,
    kustomize: Option<Spanned<RawKustomize>>,
    kustomize_bin: Option<String>,
    kustomize_timeout: Option<u64>,
    kustomize_roots: Vec<String>,
    karpenter: Option<RawKarpenter>,
    clusters: Vec<RawClusterEntry>,
}

/// `kustomize:`: a mode (`kustomize: off`), or a section whose keys are the same settings as
/// the top-level `kustomizeBin`, `kustomizeTimeout` and `kustomizeRoots`
/// (`kustomize: {mode: auto, roots: [labs/base]}`).
#[derive(Debug)]
enum RawKustomize {
    Mode(String),
    Section(RawKustomizeSection),
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct RawKustomizeSection {
    mode: Option<Spanned<String>>,
    bin: Option<String>,
    timeout: Option<u64>,
    roots: Vec<String>,
}

impl<'de> Deserialize<'de> for RawKustomize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawKustomize;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mode (auto, always or off) or a map of mode, bin, timeout and roots")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawKustomize, E> {
                Ok(RawKustomize::Mode(v.to_string()))
            }
            // What a YAML 1.1 reader makes of an unquoted `off`.
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<RawKustomize, E> {
                Ok(RawKustomize::Mode(
                    if v { "true" } else { "off" }.to_string(),
                ))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                m: A,
            ) -> Result<RawKustomize, A::Error> {
                RawKustomizeSection::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                    .map(RawKustomize::Section)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawClusterEntry {
    name: Spanned<String>,
    paths: Spanned<Vec<String>>,
    #[serde(default)]
    context: Vec<String>,
    #[serde(default)]
    cluster: Option<Spanned<RawCluster>>,
}

/// `karpenter:`: the Karpenter installation the manifests are for.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct RawKarpenter {
    version: Option<Spanned<String>>,
    feature_gates: RawFeatureGates,
}

/// `karpenter.featureGates`: the gates of Karpenter's `--feature-gates` that change what
/// karplint simulates.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct RawFeatureGates {
    node_overlay: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct RawCluster {
    region: Option<String>,
    zones: Vec<String>,
    node_groups: Vec<RawNodeGroup>,
    subnets: Vec<RawSubnet>,
    instance_types: Option<String>,
    admission: RawAdmission,
    addons: Vec<Spanned<String>>,
}

/// `cluster.admission`: each plugin on (`true`) or off; unset means as on EKS.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct RawAdmission {
    extended_resource_toleration: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawNodeGroup {
    name: String,
    instance_type: String,
    #[serde(default)]
    count: u32,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    taints: Vec<RawTaint>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawTaint {
    key: String,
    #[serde(default)]
    value: Option<String>,
    effect: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawSubnet {
    id: String,
    zone: String,
    #[serde(rename = "availableIPv4", alias = "availableIpv4")]
    available_ipv4: u64,
}

/// The config file that applies in `dir`: `.karplint.yaml` there or in the nearest parent,
/// looking no higher than the repository root (the nearest directory holding `.git`), so a
/// checkout never picks up a config from outside it.
pub fn discover(dir: &Path) -> Option<PathBuf> {
    for d in dir.ancestors() {
        let p = d.join(FILE_NAME);
        if p.is_file() {
            return Some(p);
        }
        if d.join(".git").exists() {
            return None;
        }
    }
    None
}

/// Reads and validates a config file of at most `max` bytes (`--max-file-size`).
/// `known_rules` are the rule ids `rules:` may name.
pub fn load(path: &Path, known_rules: &[&str], max: u64) -> Result<Config, Box<ConfigError>> {
    let io = |message: String| {
        Box::new(ConfigError::Io {
            path: crate::discover::printable(path),
            message,
        })
    };
    let bytes = crate::discover::read_file_at_most(path, max)
        .map_err(|e| io(e.to_string()))?
        .ok_or_else(|| io(format!("over the {max}-byte limit (--max-file-size)")))?;
    let text =
        String::from_utf8(bytes).map_err(|e| io(format!("not UTF-8: {}", e.utf8_error())))?;
    if let Some(e) = not_yaml(path, &text) {
        return Err(e);
    }
    match parse(path, &text, known_rules) {
        Err(e) if !stays_in_repository(path) => Err(redact(e, path, &text)),
        parsed => parsed,
    }
}

/// The error for a file that does not parse as YAML at all (a key file, a token list):
/// where, and nothing of what it holds.
fn not_yaml(path: &Path, text: &str) -> Option<Box<ConfigError>> {
    if text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
    {
        // [`parse`] says which byte, quoting nothing.
        return None;
    }
    let e = serde_saphyr::from_str_with_options::<serde_json::Value>(text, crate::parse::options())
        .err()?;
    let (line, column) = e
        .location()
        .map_or((1, 1), |l| (l.line() as usize, l.column() as usize));
    Some(Box::new(ConfigError::Unquoted {
        path: crate::discover::printable(path),
        what: "not a YAML config (a YAML syntax error)".into(),
        line,
        column,
        help: "point --config at a .karplint.yaml file; nothing of this file is quoted".into(),
    }))
}

/// Whether the config at `path`, followed through symbolic links, stays in the repository
/// it was found in (the nearest directory above it holding `.git`, else its directory).
fn stays_in_repository(path: &Path) -> bool {
    let Ok(dir) = std::fs::canonicalize(config_dir(path)) else {
        return false;
    };
    let repo = dir
        .ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(&dir);
    std::fs::canonicalize(path).is_ok_and(|real| real.starts_with(repo))
}

/// `e` without anything quoted from the file: where, and what kind of error.
fn redact(e: Box<ConfigError>, path: &Path, text: &str) -> Box<ConfigError> {
    let ConfigError::Invalid { span, label, .. } = *e else {
        return e;
    };
    let offset = span.offset().min(text.len());
    let before = text.get(..offset).unwrap_or_default();
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .unwrap_or_default()
        .chars()
        .count()
        + 1;
    let what = match label.as_str() {
        "here" => "not a karplint config (unknown key or wrong shape)".to_string(),
        other => format!("invalid config ({other})"),
    };
    Box::new(ConfigError::Unquoted {
        path: crate::discover::printable(path),
        what,
        line,
        column,
        help: "the config is a symbolic link to a file outside the repository, so nothing of it is quoted; point it at a .karplint.yaml".into(),
    })
}

/// Validates the text of a config file read from `path`.
pub fn parse(path: &Path, text: &str, known_rules: &[&str]) -> Result<Config, Box<ConfigError>> {
    let src = ConfigSource {
        name: crate::discover::printable(path),
        text,
    };
    if let Some(offset) = text
        .char_indices()
        .find(|&(_, c)| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        .map(|(i, _)| i)
    {
        return Err(Box::new(ConfigError::NotText {
            path: src.name,
            offset,
        }));
    }
    let raw = deserialize_raw(&src)?.unwrap_or_default();
    let base = config_dir(path);
    let rules = validate_rules(&src, &raw.rules, known_rules)?;
    let fail_on = validate_fail_on(&src, raw.fail_on.as_ref())?;
    let kustomize = validate_kustomize(&src, &raw, &base)?;
    let cluster = match raw.cluster {
        None => None,
        Some(c) => Some(validate_cluster(&src, c, &base)?),
    };
    let clusters = validate_clusters(&src, raw.clusters, &base)?;
    let karpenter = raw.karpenter.unwrap_or_default();
    let node_overlay = karpenter.feature_gates.node_overlay;
    let karpenter_version = match karpenter.version {
        None => None,
        Some(v) => Some(KarpenterVersion::parse(&v.value).map_err(|e| {
            src.invalid(
                span_of(&v),
                e.to_string(),
                "unsupported version",
                Some(e.help(&v.value)),
            )
        })?),
    };
    Ok(Config {
        path: path.to_path_buf(),
        rules,
        exclude: raw.exclude,
        include: raw.include,
        context: raw.context.iter().map(|c| base.join(c)).collect(),
        fail_on,
        require_node_pools: raw.require_node_pools,
        cluster,
        kustomize: kustomize.mode,
        kustomize_bin: kustomize.bin,
        kustomize_timeout: kustomize.timeout,
        kustomize_roots: kustomize.roots,
        karpenter_version,
        node_overlay,
        clusters,
    })
}

/// `kustomize:` (a mode or a section) with the top-level `kustomizeBin`, `kustomizeTimeout`
/// and `kustomizeRoots`; a setting given both ways is an error, as any ambiguity here is.
fn validate_kustomize(
    src: &ConfigSource,
    raw: &RawConfig,
    base: &Path,
) -> Result<KustomizeSettings, Box<ConfigError>> {
    let empty = RawKustomizeSection::default();
    let (mode, section) = match &raw.kustomize {
        None => (None, &empty),
        Some(k) => match &k.value {
            RawKustomize::Mode(m) => (Some((m.as_str(), span_of(k))), &empty),
            RawKustomize::Section(s) => {
                (s.mode.as_ref().map(|m| (m.value.as_str(), span_of(m))), s)
            }
        },
    };
    let mode = match mode {
        None => None,
        Some((m, span)) => Some(m.parse().map_err(|message| {
            src.invalid(
                span,
                message,
                "invalid mode",
                Some(one_of(m, &["auto", "always", "off"])),
            )
        })?),
    };
    let twice = [
        (
            "bin",
            "kustomizeBin",
            section.bin.is_some() && raw.kustomize_bin.is_some(),
        ),
        (
            "timeout",
            "kustomizeTimeout",
            section.timeout.is_some() && raw.kustomize_timeout.is_some(),
        ),
        (
            "roots",
            "kustomizeRoots",
            !section.roots.is_empty() && !raw.kustomize_roots.is_empty(),
        ),
    ];
    if let (Some(k), Some((key, top, _))) = (&raw.kustomize, twice.iter().find(|t| t.2)) {
        return Err(src.invalid(
            span_of(k),
            format!("`kustomize.{key}` and `{top}` are both given"),
            "kustomize section",
            Some(format!(
                "keep one of them: `kustomize.{key}` or the top-level `{top}`"
            )),
        ));
    }
    Ok(KustomizeSettings {
        mode,
        bin: section
            .bin
            .as_ref()
            .or(raw.kustomize_bin.as_ref())
            .map(|p| base.join(p)),
        timeout: section.timeout.or(raw.kustomize_timeout),
        roots: section
            .roots
            .iter()
            .chain(&raw.kustomize_roots)
            .map(|p| base.join(p))
            .collect(),
    })
}

/// What `kustomize:` and the top-level `kustomize*` keys set together.
struct KustomizeSettings {
    mode: Option<crate::kustomize::Mode>,
    bin: Option<PathBuf>,
    timeout: Option<u64>,
    roots: Vec<PathBuf>,
}

/// `clusters:`: each name given once, each entry with a path, and no `instanceTypes` of its
/// own (one catalog serves the run).
fn validate_clusters(
    src: &ConfigSource,
    raw: Vec<RawClusterEntry>,
    base: &Path,
) -> Result<Vec<ClusterEntry>, Box<ConfigError>> {
    let mut out: Vec<ClusterEntry> = Vec::new();
    for e in raw {
        if e.name.value.trim().is_empty() {
            return Err(src.invalid(
                span_of(&e.name),
                "a cluster's name is empty".into(),
                "empty name",
                Some("name the cluster as findings should say it (`prod`, `staging`)".into()),
            ));
        }
        if out.iter().any(|c| c.name == e.name.value) {
            return Err(src.invalid(
                span_of(&e.name),
                format!("cluster {:?} is listed twice", e.name.value),
                "listed twice",
                Some("give each cluster one entry, with every directory under its `paths`".into()),
            ));
        }
        if e.paths.value.is_empty() {
            return Err(src.invalid(
                span_of(&e.paths),
                format!("cluster {:?} has no paths", e.name.value),
                "no paths",
                Some("list the directories that hold this cluster's manifests".into()),
            ));
        }
        let cluster = match e.cluster {
            None => None,
            Some(c) if c.value.instance_types.is_some() => {
                return Err(src.invalid(
                    span_of(&c),
                    format!("cluster {:?} sets instanceTypes", e.name.value),
                    "instanceTypes",
                    Some("one instance-type catalog serves the run: set `cluster.instanceTypes` at the top level".into()),
                ));
            }
            Some(c) => Some(validate_cluster(src, c.value, base)?),
        };
        out.push(ClusterEntry {
            name: e.name.value,
            paths: e.paths.value.iter().map(|p| base.join(p)).collect(),
            context: e.context.iter().map(|p| base.join(p)).collect(),
            cluster,
        });
    }
    Ok(out)
}

/// The config file being validated: what its errors name and point into.
struct ConfigSource<'a> {
    name: String,
    text: &'a str,
}

impl ConfigSource<'_> {
    /// A validation error labelled at `span` of the file, quoting only an excerpt of the
    /// span's line.
    fn invalid(
        &self,
        span: (usize, usize),
        message: String,
        label: &str,
        help: Option<String>,
    ) -> Box<ConfigError> {
        let src = Excerpt::of(&self.name, self.text, span.0);
        let start = span.0.clamp(src.offset, src.offset + src.text.len());
        let end = span
            .0
            .saturating_add(span.1)
            .clamp(start, src.offset + src.text.len());
        Box::new(ConfigError::Invalid {
            message: shorten(&message, MAX_MESSAGE),
            src,
            span: (start, end - start).into(),
            label: label.to_string(),
            help,
        })
    }
}

/// The longest excerpt of a line an error quotes, and the longest message, in bytes.
const MAX_EXCERPT: usize = 120;
pub(crate) const MAX_MESSAGE: usize = 200;

/// `s` cut to at most `max` bytes (on a character boundary), with `…` when cut.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// What a config error quotes: at most [`MAX_EXCERPT`] bytes of one line of the file,
/// placed at its line and column so that miette shows the real position.
#[derive(Debug)]
pub struct Excerpt {
    name: String,
    text: String,
    /// Byte offset of `text` in the file.
    offset: usize,
    /// 0-based line and character column of `text` in the file.
    line: usize,
    column: usize,
}

impl Excerpt {
    /// The excerpt of `file` around byte `at`: its line, cut to a window from a little
    /// before `at` when the line is long.
    fn of(name: &str, file: &str, at: usize) -> Excerpt {
        let mut at = at.min(file.len());
        while !file.is_char_boundary(at) {
            at -= 1;
        }
        let line_start = file[..at].rfind('\n').map_or(0, |i| i + 1);
        let line_end = file[at..].find(['\n', '\r']).map_or(file.len(), |i| at + i);
        let mut start = line_start.max(at.saturating_sub(MAX_EXCERPT / 3));
        while !file.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = line_end.min(start + MAX_EXCERPT);
        while !file.is_char_boundary(end) {
            end -= 1;
        }
        Excerpt {
            name: name.to_string(),
            text: file[start..end].to_string(),
            offset: start,
            line: file[..line_start].matches('\n').count(),
            column: file[line_start..start].chars().count(),
        }
    }
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        _context_lines_before: usize,
        _context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let end = self.offset + self.text.len();
        if span.offset() < self.offset || span.offset() > end {
            return Err(MietteError::OutOfBounds);
        }
        // Always the whole excerpt: one line, however many context lines are asked for.
        // The column of the span's start, for the `[file:line:column]` header.
        let before = self.text.get(..span.offset() - self.offset);
        let column = self.column + before.map_or(0, |t| t.chars().count());
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            self.text.as_bytes(),
            (self.offset, self.text.len()).into(),
            self.line,
            column,
            1,
        )))
    }
}

/// The `(offset, length)` of a spanned value, as the error label wants it.
fn span_of<T>(s: &Spanned<T>) -> (usize, usize) {
    (s.offset as usize, s.len as usize)
}

/// The directory that relative paths in the file are resolved against.
fn config_dir(path: &Path) -> PathBuf {
    path.parent()
        .map(Path::to_path_buf)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Reads the file into its raw, spanned shape; a YAML or unknown-key error points at its
/// location. `None` for an empty file.
fn deserialize_raw(src: &ConfigSource) -> Result<Option<RawConfig>, Box<ConfigError>> {
    let text = src.text;
    serde_saphyr::from_str(text).map_err(|e| {
        // Without serde-saphyr's own snippet: it quotes lines around the error, and the
        // error quotes only an excerpt of one.
        let rendered = e.without_snippet().to_string();
        let rendered = rendered.lines().next().unwrap_or_default().to_string();
        let message = match rendered.rfind(" at line ") {
            Some(i) => rendered[..i].to_string(),
            None => rendered,
        };
        let span = e
            .location()
            .map(|loc| {
                let s = loc.span();
                match s.byte_offset() {
                    Some(o) => (o as usize, s.byte_len().unwrap_or(0) as usize),
                    None => (
                        crate::parse::offset_of(text, loc.line() as usize, loc.column() as usize),
                        0,
                    ),
                }
            })
            .unwrap_or((0, 0));
        let span = (span.0.min(text.len()), span.1);
        let help = unknown_key_help(&message).unwrap_or_else(|| {
            "top-level keys are rules, exclude, include, context, failOn, kustomize, kustomizeBin, kustomizeTimeout, kustomizeRoots, karpenter, cluster and clusters"
                .into()
        });
        src.invalid(
            span,
            format!("invalid config: {message}"),
            "here",
            Some(help),
        )
    })
}

/// `rules:`: every key a known rule id, every value a level.
fn validate_rules(
    src: &ConfigSource,
    raw: &SpannedMap,
    known_rules: &[&str],
) -> Result<BTreeMap<String, Level>, Box<ConfigError>> {
    let mut rules = BTreeMap::new();
    for (k, v) in &raw.0 {
        if !known_rules.contains(&k.value.as_str()) {
            let close = crate::suggest::closest(&k.value, known_rules);
            return Err(src.invalid(
                span_of(k),
                format!("unknown rule {:?} in config", k.value),
                "unknown rule",
                Some(match close {
                    Some(c) => format!("did you mean `{c}`? `karplint rules` lists every rule"),
                    None => "`karplint rules` lists every rule".into(),
                }),
            ));
        }
        let Some(level) = Level::parse(v.value.as_str()) else {
            return Err(src.invalid(
                (v.offset as usize, v.len as usize),
                format!("invalid level {:?} for rule {}", v.value.as_str(), k.value),
                "invalid level",
                Some(one_of(
                    v.value.as_str(),
                    &["off", "info", "warning", "error"],
                )),
            ));
        };
        rules.insert(k.value.to_string(), level);
    }
    Ok(rules)
}

/// `failOn:`, when given, must name a severity or `never`.
fn validate_fail_on(
    src: &ConfigSource,
    raw: Option<&Spanned<String>>,
) -> Result<Option<FailOn>, Box<ConfigError>> {
    match raw {
        None => Ok(None),
        Some(f) => Ok(Some(FailOn::parse(&f.value).ok_or_else(|| {
            src.invalid(
                span_of(f),
                format!("invalid failOn {:?}", f.value),
                "invalid level",
                Some(one_of(&f.value, &["error", "warning", "info", "never"])),
            )
        })?)),
    }
}

/// `cluster:`: node groups validated, `instanceTypes` resolved against `base`.
fn validate_cluster(
    src: &ConfigSource,
    c: RawCluster,
    base: &Path,
) -> Result<ClusterSection, Box<ConfigError>> {
    let mut node_groups = Vec::new();
    for g in c.node_groups {
        node_groups.push(validate_node_group(src, g)?);
    }
    let known = crate::karpenter::cluster::KNOWN_ADDONS;
    for a in &c.addons {
        if !known.contains(&a.value.as_str()) {
            let hint = match crate::suggest::closest(&a.value, &known) {
                Some(k) => format!("did you mean `{k}`? known add-ons: {}", known.join(", ")),
                None => format!("known add-ons: {}", known.join(", ")),
            };
            return Err(src.invalid(
                span_of(a),
                format!("unknown add-on {:?}", a.value),
                "unknown add-on",
                Some(hint),
            ));
        }
    }
    Ok(ClusterSection {
        region: c.region,
        zones: c.zones,
        node_groups,
        subnets: c
            .subnets
            .into_iter()
            .map(|s| Subnet {
                id: s.id,
                zone: s.zone,
                available_ipv4: s.available_ipv4,
            })
            .collect(),
        instance_types: c.instance_types.map(|p| base.join(p)),
        addons: c.addons.into_iter().map(|a| a.value).collect(),
        admission: crate::karpenter::pod::Admission {
            extended_resource_toleration: c.admission.extended_resource_toleration.unwrap_or(true),
        },
    })
}

/// One `cluster.nodeGroups` entry: every taint effect must be one Kubernetes knows.
fn validate_node_group(src: &ConfigSource, g: RawNodeGroup) -> Result<NodeGroup, Box<ConfigError>> {
    let mut taints = Vec::new();
    for t in g.taints {
        if !matches!(
            t.effect.value.as_str(),
            "NoSchedule" | "PreferNoSchedule" | "NoExecute"
        ) {
            return Err(src.invalid(
                span_of(&t.effect),
                format!("invalid taint effect {:?}", t.effect.value),
                "invalid effect",
                Some(one_of(
                    &t.effect.value,
                    &["NoSchedule", "PreferNoSchedule", "NoExecute"],
                )),
            ));
        }
        taints.push(NodeGroupTaint {
            key: t.key,
            value: t.value,
            effect: t.effect.value,
        });
    }
    Ok(NodeGroup {
        name: g.name,
        instance_type: g.instance_type,
        count: g.count,
        labels: g.labels,
        taints,
    })
}

/// The help for a value that is not one of `allowed`: the closest, then the list.
fn one_of(typed: &str, allowed: &[&str]) -> String {
    format!(
        "{}use one of {}",
        crate::suggest::did_you_mean(typed, allowed),
        allowed.join(", ")
    )
}

/// For the parser's "unknown field `x`, expected one of a, b" message: the known key
/// closest to `x` ("did you mean `failOn`?"), and the keys allowed where it stands.
fn unknown_key_help(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (key, rest) = rest.split_once('`')?;
    let expected: Vec<&str> = rest
        .split_once("expected one of ")
        .map(|(_, list)| {
            list.split(',')
                .map(|k| k.trim().trim_matches('`'))
                .collect()
        })
        .or_else(|| {
            let one = rest.split_once("expected `")?.1.split_once('`')?.0;
            Some(vec![one])
        })?;
    let keys = expected.join(", ");
    Some(match crate::suggest::closest(key, &expected) {
        Some(k) => format!("did you mean `{k}`? keys here: {keys}"),
        None => format!("keys here: {keys}"),
    })
}

impl ClusterSection {
    /// The section as simulator facts: node groups with their labels and taints, subnets
    /// with their free addresses, zones and region. Taints with an effect Kubernetes does not
    /// know were rejected when the file was loaded.
    pub fn to_facts(&self) -> crate::karpenter::cluster::ClusterFacts {
        use crate::karpenter::cluster::{ClusterFacts, NodeGroup};
        use crate::karpenter::taints::Taint;
        let mut facts = ClusterFacts {
            region: self.region.clone(),
            admission: self.admission,
            addons: self.addons.clone(),
            ..Default::default()
        };
        for z in &self.zones {
            facts.add_zone(z);
        }
        for g in &self.node_groups {
            let taints = g.taints.iter().filter_map(|t| {
                Some(Taint::new(
                    t.key.clone(),
                    t.value.clone().unwrap_or_default(),
                    t.effect.parse().ok()?,
                ))
            });
            let group = NodeGroup::new(
                g.name.clone(),
                Some(g.instance_type.as_str()),
                i64::from(g.count),
            )
            .with_labels(g.labels.iter().map(|(k, v)| (k.clone(), v.clone())))
            .with_taints(taints);
            facts.add_node_group(group);
        }
        for sn in &self.subnets {
            facts.add_subnet(sn.id.clone(), Some(sn.zone.as_str()), sn.available_ipv4);
        }
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["missing-resource-requests", "parse-error"];

    fn err_text(text: &str) -> (String, usize) {
        match parse(Path::new("k/.karplint.yaml"), text, KNOWN).map_err(|e| *e) {
            Err(ConfigError::Invalid { message, span, .. }) => (message, span.offset()),
            other => panic!("expected an error, got {other:?}"),
        }
    }

    /// A misspelt key gets the closest key allowed where it stands, at any depth.
    #[test]
    fn unknown_keys_get_did_you_mean() {
        for (text, want) in [
            ("fail_on: warning\n", "did you mean `failOn`?"),
            ("cluster:\n  zone: [a]\n", "did you mean `zones`?"),
            (
                "cluster:\n  admission: {extendedResourceTolerations: false}\n",
                "did you mean `extendedResourceToleration`?",
            ),
        ] {
            match parse(Path::new("k/.karplint.yaml"), text, KNOWN).map_err(|e| *e) {
                Err(ConfigError::Invalid { help, .. }) => {
                    let help = help.unwrap_or_default();
                    assert!(help.starts_with(want), "{text}: {help}");
                }
                other => panic!("{text}: expected an error, got {other:?}"),
            }
        }
    }

    #[test]
    fn kustomize_mode_and_admission() {
        let text =
            "kustomize: off\ncluster:\n  admission:\n    extendedResourceToleration: false\n";
        let c = parse(Path::new("k/.karplint.yaml"), text, KNOWN).unwrap();
        assert_eq!(c.kustomize, Some(crate::kustomize::Mode::Off));
        let admission = c.cluster.unwrap().admission;
        assert!(!admission.extended_resource_toleration);
        let (message, offset) = err_text("kustomize: sometimes\n");
        assert!(message.contains("auto, always or off"), "{message}");
        assert_eq!(offset, "kustomize: ".len());
    }

    #[test]
    fn kustomize_as_a_section() {
        let text = "kustomize:\n  mode: always\n  bin: tools/kustomize\n  timeout: 60\n  roots: [labs/base]\n";
        let c = parse(Path::new("k/.karplint.yaml"), text, KNOWN).unwrap();
        assert_eq!(c.kustomize, Some(crate::kustomize::Mode::Always));
        assert_eq!(c.kustomize_bin, Some(PathBuf::from("k/tools/kustomize")));
        assert_eq!(c.kustomize_timeout, Some(60));
        assert_eq!(c.kustomize_roots, vec![PathBuf::from("k/labs/base")]);
        // The top-level keys still say the same, and a section without a mode sets none.
        let text = "kustomize: {roots: [a]}\nkustomizeTimeout: 5\n";
        let c = parse(Path::new(".karplint.yaml"), text, KNOWN).unwrap();
        assert_eq!(c.kustomize, None);
        assert_eq!(c.kustomize_timeout, Some(5));
        assert_eq!(c.kustomize_roots, vec![PathBuf::from("./a")]);
        let (message, offset) = err_text("kustomize:\n  mode: sometimes\n");
        assert!(message.contains("auto, always or off"), "{message}");
        assert_eq!(offset, "kustomize:\n  mode: ".len());
        let (message, _) = err_text("kustomize: {roots: [a]}\nkustomizeRoots: [b]\n");
        assert!(
            message.contains("`kustomize.roots` and `kustomizeRoots`"),
            "{message}"
        );
        let (message, _) = err_text("kustomize: {root: [a]}\n");
        assert!(message.contains("root"), "{message}");
    }

    #[test]
    fn full_config() {
        let text = "rules:\n  missing-resource-requests: off\n  parse-error: warning\nexclude: [vendor]\ninclude: ['*.yaml']\ncontext: [../platform]\nfailOn: warning\ncluster:\n  region: eu-west-1\n  zones: [eu-west-1a]\n  nodeGroups:\n    - name: system\n      instanceType: m5.large\n      count: 2\n      labels: {role: system}\n      taints: [{key: CriticalAddonsOnly, effect: NoSchedule}]\n  subnets:\n    - {id: subnet-1, zone: eu-west-1a, availableIPv4: 200}\n  instanceTypes: types.json\n";
        let c = parse(Path::new("k/.karplint.yaml"), text, KNOWN).unwrap();
        assert_eq!(c.rules["missing-resource-requests"], Level::Off);
        assert_eq!(c.rules["parse-error"], Level::On(Severity::Warning));
        assert_eq!(c.context, vec![PathBuf::from("k/../platform")]);
        assert_eq!(c.fail_on, Some(FailOn::Warning));
        let cl = c.cluster.unwrap();
        assert_eq!(cl.node_groups[0].count, 2);
        assert_eq!(cl.node_groups[0].taints[0].effect, "NoSchedule");
        assert_eq!(cl.subnets[0].available_ipv4, 200);
        assert_eq!(cl.instance_types, Some(PathBuf::from("k/types.json")));
    }

    #[test]
    fn empty_file_is_default() {
        let c = parse(Path::new(".karplint.yaml"), "# nothing\n", KNOWN).unwrap();
        assert!(c.rules.is_empty() && c.cluster.is_none());
    }

    /// `clusters:`: names and paths resolved against the config's directory; an empty or
    /// repeated name, no paths, or an `instanceTypes` of a cluster's own is an error at it.
    #[test]
    fn clusters() {
        let text = "clusters:\n  - name: prod\n    paths: [clusters/prod]\n    context: [platform/prod]\n    cluster: {zones: [us-east-1a]}\n  - name: staging\n    paths: [clusters/staging]\n";
        let c = parse(Path::new("k/.karplint.yaml"), text, KNOWN).unwrap();
        assert_eq!(c.clusters.len(), 2);
        assert_eq!(c.clusters[0].name, "prod");
        assert_eq!(c.clusters[0].paths, [PathBuf::from("k/clusters/prod")]);
        assert_eq!(c.clusters[0].context, [PathBuf::from("k/platform/prod")]);
        let zones = c.clusters[0].cluster.as_ref().map(|s| s.zones.clone());
        assert_eq!(zones, Some(vec!["us-east-1a".to_string()]));
        assert!(c.clusters[1].cluster.is_none());
        for (text, want) in [
            (
                "clusters:\n  - {name: a, paths: [x]}\n  - {name: a, paths: [y]}\n",
                "cluster \"a\" is listed twice",
            ),
            (
                "clusters:\n  - {name: \"\", paths: [x]}\n",
                "a cluster's name is empty",
            ),
            (
                "clusters:\n  - {name: a, paths: []}\n",
                "cluster \"a\" has no paths",
            ),
            (
                "clusters:\n  - {name: a, paths: [x], cluster: {instanceTypes: t.json}}\n",
                "cluster \"a\" sets instanceTypes",
            ),
        ] {
            let (msg, _) = err_text(text);
            assert_eq!(msg, want);
        }
    }

    #[test]
    fn unknown_key_has_span() {
        let (msg, off) = err_text("rules: {}\nfailon: error\n");
        assert!(msg.contains("failon"), "{msg}");
        assert_eq!(off, 10);
    }

    #[test]
    fn unknown_rule_has_span() {
        let (msg, off) = err_text("rules:\n  missing-resource-request: off\n");
        assert_eq!(msg, "unknown rule \"missing-resource-request\" in config");
        assert_eq!(off, 9);
    }

    #[test]
    fn bad_level_and_nested_unknown_key() {
        let (msg, _) = err_text("rules:\n  parse-error: loud\n");
        assert!(msg.contains("invalid level"), "{msg}");
        let (msg, _) =
            err_text("cluster:\n  subnets:\n    - {id: a, zone: b, availableIPv4: 1, x: 2}\n");
        assert!(msg.contains('x'), "{msg}");
    }

    /// `karpenter.version`: `1.8`, `v1.8`, `1.8.3`, unquoted or quoted (`1.10` is not read
    /// as the number 1.1); an unknown version is an error at its value with the closest
    /// known one, an older one names the supported range.
    #[test]
    fn karpenter_version() {
        for (text, want) in [
            ("karpenter: {version: 1.8}\n", "v1.8"),
            ("karpenter: {version: \"v1.8\"}\n", "v1.8"),
            ("karpenter: {version: 1.8.3}\n", "v1.8"),
            ("karpenter:\n  version: 1.10\n", "v1.10"),
            ("karpenter:\n  version: 0.37\n", "v0.37"),
        ] {
            let c = parse(Path::new("k/.karplint.yaml"), text, KNOWN).unwrap();
            assert_eq!(
                c.karpenter_version.map(|v| v.to_string()).as_deref(),
                Some(want)
            );
        }
        let c = parse(Path::new("k/.karplint.yaml"), "karpenter: {}\n", KNOWN).unwrap();
        assert_eq!(c.karpenter_version, None);
        assert_eq!(c.node_overlay, None);
        for (text, want) in [
            (
                "karpenter: {featureGates: {nodeOverlay: false}}\n",
                Some(false),
            ),
            (
                "karpenter: {featureGates: {nodeOverlay: true}}\n",
                Some(true),
            ),
            ("karpenter: {featureGates: {}}\n", None),
        ] {
            let c = parse(Path::new("k/.karplint.yaml"), text, KNOWN).unwrap();
            assert_eq!(c.node_overlay, want, "{text}");
        }
        assert!(
            parse(
                Path::new("k/.karplint.yaml"),
                "karpenter: {featureGates: {nodeoverlay: false}}\n",
                KNOWN
            )
            .is_err(),
            "a misspelt gate is an error"
        );
        let err =
            |text: &str| match parse(Path::new("k/.karplint.yaml"), text, KNOWN).map_err(|e| *e) {
                Err(ConfigError::Invalid {
                    message,
                    span,
                    help,
                    ..
                }) => (message, span.offset(), help.unwrap_or_default()),
                other => panic!("expected an error, got {other:?}"),
            };
        let (message, offset, help) = err("karpenter: {version: 1.15}\n");
        assert_eq!(message, "unknown Karpenter version v1.15");
        assert_eq!(offset, "karpenter: {version: ".len());
        assert!(help.starts_with("did you mean `v1.14`?"), "{help}");
        let (message, _, help) = err("karpenter: {version: 0.31}\n");
        assert!(
            message.contains("versions v0.32 to v1.14 are supported"),
            "{message}"
        );
        assert!(help.starts_with("known versions: v0.32 to v1.14"), "{help}");
        let (_, _, help) = err("karpenter: {verison: 1.8}\n");
        assert!(help.starts_with("did you mean `version`?"), "{help}");
    }
}
