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

/// Lints the working directory as one side named `name`: the paths of `args` this side
/// has (none, when it has none of them: then it holds no object but its context's).
fn lint_side(args: &LintArgs, name: &str) -> Result<Linted, i32> {
    let mut args = args.clone();
    args.paths.retain(|p| p.exists());
    let linted = lint_outcome(&args, Mode::Diff)?;
    let nodepools_missing = linted.nodepools_missing();
    let outcome = linted.outcome;
    for e in &outcome.read_errors {
        eprintln!("karplint: {name}: {}", report::escape::text(&e.to_string()));
    }
    let failed_run = if nodepools_missing {
        Some(refuse_unchecked())
    } else {
        (!outcome.read_errors.is_empty()).then_some(2)
    };
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

/// What `karplint diff` was asked, checked: the outputs, the repository and the commits.
struct Request {
    cwd: PathBuf,
    dests: Vec<(Format, Destination)>,
    repo: git::Repo,
    base: String,
    base_commit: String,
    /// The HEAD revision and its commit, or `None` for the working tree.
    head: Option<(String, String)>,
}

/// Checks the command line and the revisions; `Err` is the exit code.
fn request(args: &LintArgs) -> Result<Request, i32> {
    let Some((base, head)) = args.revisions.clone() else {
        return Err(2);
    };
    let cwd = std::env::current_dir().map_err(|e| {
        eprintln!("karplint diff: the working directory: {e}");
        2
    })?;
    let dests = absolute_outputs(args, &cwd)?;
    let repo = git::open(&cwd).map_err(|e| git_error(&e))?;
    let base_commit = repo.commit(&base).map_err(|e| git_error(&e))?;
    let head = match head {
        Some(h) => {
            let c = repo.commit(&h).map_err(|e| git_error(&e))?;
            Some((h, c))
        }
        None => None,
    };
    for path in &args.paths {
        let in_repo = in_repository(&repo.prefix, path).ok_or_else(|| {
            eprintln!(
                "karplint diff: {} is not inside the repository: paths are relative to the working directory, within the work tree",
                shown(path)
            );
            2
        })?;
        let in_head = match &head {
            Some((_, commit)) => repo.has_path(commit, &in_repo),
            None => Ok(path.exists()),
        };
        let anywhere = in_head.and_then(|h| Ok(h || repo.has_path(&base_commit, &in_repo)?));
        if !anywhere.map_err(|e| git_error(&e))? {
            let head_name = head
                .as_ref()
                .map_or("the working tree", |(h, _)| h.as_str());
            eprintln!(
                "karplint diff: {} is in neither {} nor {head_name}",
                shown(path),
                report::escape::line(&base)
            );
            return Err(2);
        }
    }
    Ok(Request {
        cwd,
        dests,
        repo,
        base,
        base_commit,
        head,
    })
}

/// `path`, given in the directory `prefix` of the work tree, relative to the work tree's
/// root; `None` when it is absolute or leaves the work tree.
fn in_repository(prefix: &Path, path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in prefix.join(path).components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// `karplint diff BASE [HEAD]`.
pub(super) fn run_diff(args: &LintArgs) -> i32 {
    let req = match request(args) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let tmp = match tempfile::Builder::new().prefix("karplint-diff").tempdir() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("karplint diff: a temporary directory: {e}");
            return 2;
        }
    };
    judge(args, &req, tmp.path()).unwrap_or_else(|code| code)
}

/// Writes the trees under `tmp` and judges both sides: BASE is written while HEAD is
/// linted (most of a run waits on parsing, and git writes files meanwhile), then BASE is
/// linted and its findings taken out of HEAD's report. A HEAD revision that the work tree
/// is exactly (a pull request's checkout) is linted where it is, as the working tree is.
fn judge(args: &LintArgs, req: &Request, tmp: &Path) -> Result<i32, i32> {
    let base_root = tmp.join("base");
    let head_root = tmp.join("head");
    let head_name = (req.head.as_ref()).map_or("working tree", |(name, _)| name.as_str());
    let mut left_out = Vec::new();
    // A HEAD revision is written first, so that BASE's files that HEAD has are links to it
    // (to the work tree's, when it is HEAD's checkout).
    let (head_tree, head_dir) = match &req.head {
        Some((_, commit)) => {
            let checked_out = req.repo.is_checked_out(commit).map_err(|e| git_error(&e))?;
            let tree = if checked_out {
                req.repo.checked_out(commit)
            } else {
                req.repo.extract(commit, &head_root, None)
            };
            let tree = tree.map_err(|e| git_error(&e))?;
            left_out.extend(tree.left_out.describe().map(|l| (head_name, l)));
            let dir = if checked_out {
                req.cwd.clone()
            } else {
                head_root.join(&req.repo.prefix)
            };
            (Some(tree), dir)
        }
        None => (None, req.cwd.clone()),
    };
    std::thread::scope(|scope| {
        let base_job =
            scope.spawn(|| (req.repo).extract(&req.base_commit, &base_root, head_tree.as_ref()));
        let mut head = in_dir(&head_dir, || lint_side(args, head_name))?;
        match base_job.join() {
            Ok(Ok(tree)) => {
                left_out.extend(tree.left_out.describe().map(|l| (req.base.as_str(), l)));
            }
            Ok(Err(e)) => return Err(git_error(&e)),
            Err(_) => return Err(2),
        }
        for (side, left) in left_out {
            head.report.notes.push(report::Note::new(
                "skipped",
                format!("{side}: {left} not read from git"),
            ));
        }
        let (base, baseline) = in_dir(&base_root.join(&req.repo.prefix), || {
            let linted = lint_side(args, &req.base)?;
            let baseline = Baseline::as_given(&linted.report);
            Ok((linted, baseline))
        })?;
        in_dir(&head_dir, || {
            Ok(report_head(args, &req.dests, base, head, &baseline))
        })
    })
}

/// Runs `f` with `dir` as the working directory.
fn in_dir<T>(dir: &Path, f: impl FnOnce() -> Result<T, i32>) -> Result<T, i32> {
    let _guard = InDir::enter(dir).map_err(|e| {
        eprintln!("karplint diff: entering {}: {e}", shown(dir));
        2
    })?;
    f()
}

/// Takes BASE's findings out of HEAD's report, compares and writes the reports; the exit
/// status.
fn report_head(
    args: &LintArgs,
    dests: &[(Format, Destination)],
    base: Linted,
    mut head: Linted,
    baseline: &Baseline,
) -> i32 {
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
    // Where HEAD's workloads are written (BASE's files are not shown).
    plan::locate(&mut head.side.plan, &head.report.sources);
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
