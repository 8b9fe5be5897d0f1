//! `karplint diff BASE [HEAD]`: each side is read from git into a temporary directory
//! (HEAD defaults to the working tree, which is linted where it is) and linted from the
//! same directory of it as the working directory, so that config discovery, `--context`,
//! globs and the files' names are those of a lint run there. BASE's findings are the
//! baseline of HEAD's; the rest is [`crate::diff`]'s.

use super::{
    Destination, Format, LintArgs, Mode, colored, destinations, format_name, lint_outcome,
    refuse_unchecked, shown, write_to,
};
use crate::diff::{self, Side, git, render};
use crate::report::baseline::{self, Baseline};
use crate::report::{self, github, human, plan, sarif};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The working directory, changed for as long as it lives.
struct InDir {
    back: PathBuf,
}

impl InDir {
    /// Makes `dir` (created if the revision has no such directory) the working directory.
    fn enter(dir: &Path) -> std::io::Result<InDir> {
        let back = std::env::current_dir()?;
        std::fs::create_dir_all(dir)?;
        std::env::set_current_dir(dir)?;
        Ok(InDir { back })
    }
}

impl Drop for InDir {
    fn drop(&mut self) {
        let _ = std::env::set_current_dir(&self.back);
    }
}

/// One side of the diff, linted, with the exit status its run asks for beside the diff's.
struct Linted {
    side: Side,
    report: report::Report,
    failed_run: Option<i32>,
    fail_on: super::FailOn,
}

/// Lints the working directory as one side named `name`.
fn lint_side(args: &LintArgs, name: &str) -> Result<Linted, i32> {
    let linted = lint_outcome(args, Mode::Diff)?;
    let nodepools_missing = linted.nodepools_missing();
    let mut outcome = linted.outcome;
    for e in &outcome.read_errors {
        eprintln!("karplint: {name}: {}", report::escape::text(&e.to_string()));
    }
    let failed_run = if nodepools_missing {
        Some(refuse_unchecked())
    } else {
        (!outcome.read_errors.is_empty()).then_some(2)
    };
    plan::locate(&mut outcome.plan, &outcome.report.sources);
    Ok(Linted {
        side: Side {
            name: name.to_string(),
            plan: outcome.plan,
            cost: outcome.cost,
            disruption: outcome.disruption,
        },
        report: outcome.report,
        failed_run,
        fail_on: linted.fail_on,
    })
}

/// Prints a git error; exit code 2.
fn git_error(e: &git::GitError) -> i32 {
    eprintln!("karplint diff: {e}");
    2
}

/// The outputs, with file names made absolute: the run changes directory.
fn absolute_outputs(args: &LintArgs, cwd: &Path) -> Result<Vec<(Format, Destination)>, i32> {
    let dests = destinations(&args.format, &args.output).map_err(|e| {
        eprintln!("karplint: {e}");
        2
    })?;
    if let Some((f, _)) = dests.iter().find(|(f, _)| *f == Format::Concise) {
        eprintln!(
            "karplint: `diff` has no {} format; use human, json, markdown, sarif or github",
            format_name(*f)
        );
        return Err(2);
    }
    Ok((dests.into_iter())
        .map(|(f, d)| match d {
            Destination::File(p) if p.is_relative() => (f, Destination::File(cwd.join(p))),
            d => (f, d),
        })
        .collect())
}

/// `karplint diff BASE [HEAD]`.
pub(super) fn run_diff(args: &LintArgs) -> i32 {
    let Some((base, head)) = args.revisions.clone() else {
        return 2;
    };
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("karplint diff: the working directory: {e}");
            return 2;
        }
    };
    let dests = match absolute_outputs(args, &cwd) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let repo = match git::open(&cwd) {
        Ok(r) => r,
        Err(e) => return git_error(&e),
    };
    let commits = repo
        .commit(&base)
        .and_then(|b| Ok((b, head.as_deref().map(|h| repo.commit(h)).transpose()?)));
    let (base_commit, head_commit) = match commits {
        Ok(c) => c,
        Err(e) => return git_error(&e),
    };
    let tmp = match tempfile::Builder::new().prefix("karplint-diff").tempdir() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("karplint diff: a temporary directory: {e}");
            return 2;
        }
    };
    let tree = |commit: &str, dir: &str| -> Result<PathBuf, i32> {
        let root = tmp.path().join(dir);
        repo.extract(commit, &root).map_err(|e| git_error(&e))?;
        Ok(root.join(&repo.prefix))
    };
    let base_dir = match tree(&base_commit, "base") {
        Ok(d) => d,
        Err(code) => return code,
    };
    let (base_side, baseline) = match in_dir(&base_dir, || {
        let linted = lint_side(args, &base)?;
        let baseline = Baseline::as_given(&linted.report);
        Ok((linted, baseline))
    }) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let head_dir = match &head_commit {
        Some(c) => match tree(c, "head") {
            Ok(d) => d,
            Err(code) => return code,
        },
        None => cwd.clone(),
    };
    let head_name = head.unwrap_or_else(|| "working tree".to_string());
    let code = in_dir(&head_dir, || {
        Ok(report_head(args, &dests, base_side, &baseline, &head_name))
    });
    code.unwrap_or_else(|c| c)
}

/// Runs `f` with `dir` as the working directory.
fn in_dir<T>(dir: &Path, f: impl FnOnce() -> Result<T, i32>) -> Result<T, i32> {
    let _guard = InDir::enter(dir).map_err(|e| {
        eprintln!("karplint diff: entering {}: {e}", shown(dir));
        2
    })?;
    f()
}

/// Lints HEAD, takes BASE's findings out of its report, compares and writes the reports;
/// the exit status.
fn report_head(
    args: &LintArgs,
    dests: &[(Format, Destination)],
    base: Linted,
    baseline: &Baseline,
    head_name: &str,
) -> i32 {
    let mut head = match lint_side(args, head_name) {
        Ok(h) => h,
        Err(code) => return code,
    };
    let applied = baseline::apply(&mut head.report, baseline, Path::new(&base.side.name));
    // The notes of applying a baseline speak of a file: this one says what it means.
    head.report.notes.retain(|n| n.kind != "baseline");
    if applied.matched == 0 {
        head.report.summary.baselined = None;
    }
    if applied.matched > 0 {
        head.report.notes.push(report::Note::new(
            "baseline",
            format!(
                "{} finding(s) present at {} not reported: only what the change adds is",
                applied.matched, base.side.name
            ),
        ));
    }
    let changes = diff::compare(&base.side, &head.side);
    let new = &head.report;
    let shown_opts = report::Shown {
        quiet: args.quiet,
        at_least: head.fail_on.threshold(),
    };
    let quotes_source = dests.iter().any(|(f, _)| *f == Format::Human);
    let texts = report::Texts::load_with(new, quotes_source);
    let width = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(100);
    let mut code = 0;
    for (format, dest) in dests {
        let style = human::Style {
            color: colored(args, dest),
            width,
        };
        let write = |w: &mut dyn Write| -> std::io::Result<()> {
            let text = match format {
                Format::Json => return render::write_json(&changes, new, &texts, w),
                Format::Sarif => return sarif::write(new, &texts, w),
                Format::Github => github::render(new, &texts, shown_opts),
                Format::Markdown => render::render_markdown(&changes, new, &texts, shown_opts),
                Format::Human | Format::Concise => {
                    render::render_human(&changes, new, &texts, style, shown_opts)
                }
            };
            w.write_all(text.as_bytes())
        };
        code = code.max(write_to(dest, write));
    }
    if let Some(c) = base.failed_run.or(head.failed_run) {
        return c;
    }
    if code != 0 {
        return code;
    }
    i32::from(diff::fails(&changes, new, head.fail_on.threshold()))
}
