//! Command line: clap definitions, and the glue from arguments to the pipeline and from the
//! report to stdout and an exit code (0 clean, 1 findings at or above `--fail-on`, 2 usage,
//! configuration or I/O errors).
//!
//! Settings come from `.karplint.yaml` (the nearest above the linted paths, up to the
//! repository root, or named with `--config`) and are overridden by flags. Several `--format`/`--output` pairs
//! write several reports from one run.

use crate::config::{self, Config, Level};
use crate::engine::{self, LintOptions};
use crate::karpenter::version::KarpenterVersion;
use crate::report::baseline::{self, Baseline};
use crate::report::{self, cost, github, human, json, markdown, plan, sarif};
use crate::rules;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

mod diff;

pub use crate::config::FailOn;

const OUTPUT_HELP: &str = "\
Formats and outputs pair up in order: the first --output receives the first --format, and
so on; `-` is standard output. Formats left without an --output go to standard output (at
most one may). For example, annotations in the log plus a SARIF file:

  karplint --format github --format sarif --output - --output karplint.sarif manifests/

Configuration: the .karplint.yaml nearest above the linted paths (a directory from itself,
a file from its directory), up to the repository root (or --config); the summary names the
config applied, and a note the paths under another config.
Flags override it: --fail-on replaces failOn, --rule ID=LEVEL overrides rules.ID, and
--include, --exclude and --context replace the file's lists when given.

Options may stand before or after a subcommand: `karplint -j 2 plan DIR`.

Exit codes: 0 nothing at or above --fail-on, 1 findings (plan: a workload would stay
Pending, unless --fail-on never), 2 usage, config or I/O error.";

/// The options are global: they may stand before or after a subcommand
/// (`karplint -j 2 plan DIR` and `karplint plan -j 2 DIR` are the same run).
#[derive(Debug, Parser)]
#[command(
    name = "karplint",
    version,
    about = "Tells you, from the YAML alone, why Karpenter would leave a pod Pending",
    after_long_help = OUTPUT_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Files or directories to lint; `-` reads one YAML stream from standard input
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub lint: LintArgs,
}

/// The paths of a subcommand that lints (`plan`).
#[derive(Debug, clap::Args)]
pub struct Paths {
    /// Files or directories to read; `-` reads one YAML stream from standard input
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Clone, clap::Args)]
pub struct LintArgs {
    /// The paths of the run: the top level's, or the subcommand's.
    #[arg(skip)]
    pub paths: Vec<PathBuf>,
    /// `karplint diff`'s revisions: BASE, and HEAD unless the working tree.
    #[arg(skip)]
    pub revisions: Option<(String, Option<String>)>,
    /// Output format (repeatable; pairs with --output in order) [default: human]
    #[arg(long, value_enum, value_name = "FORMAT", global = true)]
    pub format: Vec<Format>,
    /// Write the report of the matching --format here; `-` is standard output (repeatable)
    #[arg(short = 'o', long, value_name = "FILE", global = true)]
    pub output: Vec<PathBuf>,
    /// Exit with 1 when a finding at or above this severity is reported (`plan`: when a
    /// workload would stay Pending, unless `never`) [default: error, or failOn from the
    /// config]
    #[arg(long, value_enum, global = true)]
    pub fail_on: Option<FailOn>,
    /// Print only the findings at or above --fail-on, and no summary or notes (human,
    /// concise, github and markdown; `plan`: only the workloads that stay Pending)
    #[arg(short = 'q', long, global = true)]
    pub quiet: bool,
    /// Exit with 2 when the scheduling rules could not run because no NodePool (or
    /// Provisioner) was read, instead of passing with a note [default: requireNodePools
    /// from the config]
    #[arg(long, global = true)]
    pub require_nodepools: bool,
    /// Print a table of findings per rule and severity instead of the findings (human and
    /// concise formats)
    #[arg(long, global = true)]
    pub statistics: bool,
    /// Colour: auto (a terminal, unless NO_COLOR is set; FORCE_COLOR or CLICOLOR_FORCE
    /// force it), always or never
    #[arg(long, value_enum, value_name = "WHEN", global = true)]
    pub color: Option<ColorChoice>,
    /// Render kustomizations with kustomize (or kubectl kustomize) when one is on PATH
    /// (auto), always (fail without it), or never [default: auto, or kustomize from the
    /// config]
    #[arg(long, value_enum, value_name = "WHEN", global = true)]
    pub kustomize: Option<crate::kustomize::Mode>,
    /// Render kustomizations with this kustomize (or kubectl) binary instead of looking on
    /// PATH [default: kustomize.bin or kustomizeBin from the config]
    #[arg(long, value_name = "PATH", global = true)]
    pub kustomize_bin: Option<PathBuf>,
    /// Stop rendering kustomizations after this many seconds for the whole run; roots not
    /// rendered by then are linted as written and the run exits 2 [default: 300, or
    /// kustomize.timeout or kustomizeTimeout from the config]
    #[arg(long, value_name = "SECONDS", global = true)]
    pub kustomize_timeout: Option<u64>,
    /// Keep rendered kustomizations in this directory between runs [default: the user's
    /// cache directory, $XDG_CACHE_HOME/karplint or ~/.cache/karplint]
    #[arg(long, value_name = "DIR", env = "KARPLINT_CACHE_DIR", global = true)]
    pub cache_dir: Option<PathBuf>,
    /// Render every kustomization again instead of reusing an unchanged render
    #[arg(long, global = true)]
    pub no_cache: bool,
    /// Read this config file instead of looking for .karplint.yaml
    #[arg(long, value_name = "FILE", conflicts_with = "no_config", global = true)]
    pub config: Option<PathBuf>,
    /// Ignore any .karplint.yaml
    #[arg(long, global = true)]
    pub no_config: bool,
    /// Set a rule's level, overriding the config: ID=off|info|warning|error (repeatable)
    #[arg(long, value_name = "ID=LEVEL", global = true)]
    pub rule: Vec<String>,
    /// Skip files matching this glob (repeatable)
    #[arg(long, value_name = "GLOB", global = true)]
    pub exclude: Vec<String>,
    /// Lint only files matching this glob (repeatable; default *.yaml, *.yml, *.json)
    #[arg(long, value_name = "GLOB", global = true)]
    pub include: Vec<String>,
    /// Read cluster objects (NodePools, DaemonSets, LimitRanges, …) from here without
    /// reporting on them (repeatable)
    #[arg(long, value_name = "PATH", global = true)]
    pub context: Vec<PathBuf>,
    /// Worker threads (default: one per core; at most 256)
    #[arg(short = 'j', long, value_name = "N", global = true)]
    pub threads: Option<usize>,
    /// Disable colours: the same as --color never
    #[arg(long, global = true, conflicts_with = "color")]
    pub no_color: bool,
    /// Follow symbolic links while walking directories
    #[arg(long, global = true)]
    pub follow: bool,
    /// Also lint hidden directories and files (`.github/`, `.pre-commit-config.yaml`);
    /// `.git` is never walked
    #[arg(long, global = true)]
    pub hidden: bool,
    /// Lint files that .gitignore, .ignore or .git/info/exclude ignore
    #[arg(long, global = true)]
    pub no_ignore: bool,
    /// Lint a file named on the command line even when --exclude (or the config's
    /// exclude) matches it
    #[arg(long)]
    pub no_force_exclude: bool,
    /// The Karpenter release to judge by (X.Y, vX.Y or X.Y.Z; v0.32 to v1.14): its
    /// scheduling behaviour, messages and APIs [default: v1.14, or karpenter.version from
    /// the config]
    #[arg(long, value_name = "VERSION", global = true)]
    pub karpenter_version: Option<String>,
    /// Instance types from `aws ec2 describe-instance-types` JSON instead of the built-in
    /// catalog
    #[arg(long, value_name = "FILE", global = true)]
    pub instance_types: Option<PathBuf>,
    /// Skip files larger than this many bytes
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024 * 1024, global = true)]
    pub max_file_size: u64,
    /// Place at most this many pods in Karpenter's batch per run; workloads past it are
    /// judged one pod at a time, with a note
    #[arg(long, value_name = "PODS", default_value_t = engine::DEFAULT_MAX_BATCH_PODS, global = true)]
    pub max_batch_pods: usize,
    /// Report only findings not recorded in this baseline file (see --write-baseline); the
    /// others are counted in the summary, and exit code 1 comes from new findings alone
    #[arg(long, value_name = "FILE", conflicts_with = "write_baseline")]
    pub baseline: Option<PathBuf>,
    /// Record the run's findings in this baseline file (versioned JSON) instead of
    /// reporting them, and exit 0
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per run
pub enum Command {
    /// List every rule with its default severity and a one-line summary
    Rules,
    /// Explain a rule: what it checks, why it matters, an example and the fix
    Explain {
        /// Rule id, e.g. untolerated-taint
        rule: String,
    },
    /// Show where Karpenter would put each workload: NodePool, fitting instance types, or
    /// why it would stay Pending
    Plan(Paths),
    /// What a change does to the cluster: placement, disruption, new findings and cost
    /// between two git revisions (HEAD defaults to the working tree); exit 1 when HEAD adds
    /// a finding at or above --fail-on or leaves more replicas Pending
    Diff {
        /// The revision before the change (a branch, tag or commit: `main`, `HEAD`)
        base: String,
        /// The revision after it [default: the working tree]
        head: Option<String>,
        /// Compare only these files or directories (after `--`, relative to the working
        /// directory, inside the repository) [default: .]
        #[arg(last = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Print a shell completion script: `karplint completions bash > /etc/bash_completion.d/karplint`
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `karplint man > /usr/local/share/man/man1/karplint.1`
    Man,
    /// What the simulator assumes, for the differential oracle (`scripts/oracle.sh`)
    #[command(hide = true, subcommand)]
    Debug(DebugCommand),
}

#[derive(Debug, Subcommand)]
pub enum DebugCommand {
    /// Print, as JSON, the instance types each NodePool's node class can launch: their
    /// requirements, offerings (every zone of `cluster.zones`), capacity and overhead
    InstanceTypes(Paths),
}

/// What a run of the lint pipeline is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Lint,
    Plan,
    /// One side of `karplint diff`: the plan rows and the findings.
    Diff,
    InstanceTypes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// `error[rule]: message` with source snippets, notes and help (plan: a table)
    Human,
    /// The stable JSON shape (version 1)
    Json,
    /// SARIF 2.1.0, for code scanning (not for plan)
    Sarif,
    /// GitHub Actions workflow commands (annotations; not for plan)
    Github,
    /// A Markdown table for job summaries and PR comments
    Markdown,
    /// One line per finding: `path:line:col: severity[rule] message`
    Concise,
}

/// When to colour the human and concise formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set; FORCE_COLOR or CLICOLOR_FORCE force it
    Auto,
    Always,
    Never,
}

/// Runs the command line and returns the process exit code.
pub fn run() -> i32 {
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m).map(|c| (c, m)));
    let (mut cli, matches) = match parsed {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    if let Err(e) = refuse_ignored_flags(&cli, &matches) {
        eprintln!("karplint: {e}");
        return 2;
    }
    let json = cli.lint.format.first() == Some(&Format::Json);
    match cli.command {
        Some(Command::Rules) if json => print_out(&rules_json()),
        Some(Command::Rules) => print_out(&rules_table()),
        Some(Command::Explain { rule }) => match explain(&rule) {
            Some(doc) if json => print_out(&explain_json(&rule, doc)),
            Some(doc) => print_out(doc),
            None => {
                let hint = crate::suggest::did_you_mean(&rule, &rules::known_ids());
                eprintln!("karplint: unknown rule {rule:?}; {hint}`karplint rules` lists them");
                2
            }
        },
        Some(Command::Plan(Paths { paths })) => {
            cli.lint.paths = paths;
            with_workers(&cli.lint, run_plan)
        }
        Some(Command::Diff { base, head, paths }) => {
            cli.lint.revisions = Some((base, head));
            cli.lint.paths = if paths.is_empty() {
                vec![PathBuf::from(".")]
            } else {
                paths
            };
            with_workers(&cli.lint, diff::run_diff)
        }
        Some(Command::Debug(DebugCommand::InstanceTypes(Paths { paths }))) => {
            cli.lint.paths = paths;
            with_workers(&cli.lint, run_instance_types)
        }
        Some(Command::Completions { shell }) => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "karplint", &mut out);
            print_out(&String::from_utf8_lossy(&out))
        }
        Some(Command::Man) => {
            let mut out = Vec::new();
            match clap_mangen::Man::new(Cli::command()).render(&mut out) {
                Ok(()) => print_out(&String::from_utf8_lossy(&out)),
                Err(e) => {
                    eprintln!("karplint: rendering the man page: {e}");
                    2
                }
            }
        }
        None => {
            cli.lint.paths = cli.paths;
            with_workers(&cli.lint, run_lint)
        }
    }
}

/// The options a subcommand that lints nothing takes: `rules` and `explain` take
/// `--format human|json`; `completions` and `man` take none.
fn takes(command: &Command) -> Option<(&'static str, &'static [&'static str])> {
    Some(match command {
        Command::Rules => ("rules", &["format"]),
        Command::Explain { .. } => ("explain", &["format"]),
        Command::Completions { .. } => ("completions", &[]),
        Command::Man => ("man", &[]),
        Command::Plan(_) | Command::Diff { .. } | Command::Debug(_) => return None,
    })
}

/// Every option given is honoured, or the run stops here (exit code 2) saying the
/// subcommand does not take it: the global options parse after any subcommand, but most
/// mean nothing to `rules`, `explain`, `completions` or `man`; `plan` prints no
/// statistics; `--statistics` is a table of the human and concise formats.
fn refuse_ignored_flags(cli: &Cli, matches: &clap::ArgMatches) -> Result<(), String> {
    let given = |m: &clap::ArgMatches, id: &str| {
        m.try_get_raw(id).is_ok_and(|v| v.is_some())
            && m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
    };
    let root = Cli::command();
    let sub = matches.subcommand();
    // A subcommand's own arguments (`explain RULE`) may share an id with a global option
    // (`--rule`): only the global ones are looked at.
    let own: Vec<String> = (sub
        .and_then(|(name, _)| root.find_subcommand(name))
        .into_iter())
    .flat_map(|c| c.get_arguments().filter(|a| !a.is_global_set()))
    .map(|a| a.get_id().to_string())
    .collect();
    let globals: Vec<String> = (root.get_arguments())
        .filter(|a| a.is_global_set() && !own.contains(&a.get_id().to_string()))
        .map(|a| a.get_id().to_string())
        .collect();
    let sub = sub.map(|(_, m)| m);
    let flag = |id: &str| format!("--{}", id.replace('_', "-"));
    match (&cli.command, sub) {
        (Some(command), Some(m)) if takes(command).is_some() => {
            let (name, takes) = takes(command).unwrap_or_default();
            if let Some(id) = (globals.iter())
                .find(|id| !takes.contains(&id.as_str()) && (given(m, id) || given(matches, id)))
            {
                return Err(format!(
                    "`karplint {name}` does not take {}; it lints nothing",
                    flag(id)
                ));
            }
            let formats = &cli.lint.format;
            if let Some(f) = formats
                .iter()
                .find(|f| !matches!(f, Format::Human | Format::Json))
            {
                return Err(format!(
                    "`karplint {name}` prints human or json, not --format {}",
                    format_name(*f)
                ));
            }
            if formats.len() > 1 {
                return Err(format!("`karplint {name}` takes one --format"));
            }
        }
        (Some(Command::Diff { .. }), _) if cli.lint.statistics => {
            return Err(
                "`karplint diff` does not take --statistics; it reports what a change adds".into(),
            );
        }
        (Some(Command::Plan(_)), _) if cli.lint.statistics => {
            return Err(
                "`karplint plan` does not take --statistics; it prints one row per workload (--statistics counts the findings of `karplint`)".into(),
            );
        }
        (None, _) if cli.lint.statistics => {
            if let Some(f) =
                (cli.lint.format.iter()).find(|f| !matches!(f, Format::Human | Format::Concise))
            {
                return Err(format!(
                    "--statistics is a table of the human and concise formats, not of --format {}; the counts of --format json are in its `summary`",
                    format_name(*f)
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

/// A format's name on the command line.
fn format_name(f: Format) -> String {
    f.to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
}

/// The most worker threads `-j` starts: the work is CPU-bound, so more threads only cost
/// memory and start-up time.
const MAX_THREADS: usize = 256;

/// Worker stack sizes, tried in order. Deserializing is recursive: a document nested up to
/// the parser's depth limit needs more than the 2 MiB default stack of a worker thread (in
/// debug builds well before that limit). The stack is reserved, not committed, so the first
/// costs no memory, but a memory rlimit (`ulimit -v`) counts reservations: then smaller
/// stacks are tried, and the run says so.
const WORKER_STACKS: [usize; 3] = [64 << 20, 16 << 20, 4 << 20];

/// A pool of `threads` workers (default: one per core) with `stack`-byte stacks. When one
/// cannot start, the workers already started are stopped and waited for, so that their
/// stacks are given back before the caller tries smaller ones.
fn worker_pool(
    threads: Option<usize>,
    stack: usize,
) -> Result<rayon::ThreadPool, rayon::ThreadPoolBuildError> {
    let started = std::sync::Mutex::new(Vec::new());
    let mut pool = rayon::ThreadPoolBuilder::new().spawn_handler(|worker| {
        let handle = std::thread::Builder::new()
            .stack_size(stack)
            .spawn(|| worker.run())?;
        started
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(handle);
        Ok(())
    });
    if let Some(n) = threads {
        pool = pool.num_threads(n);
    }
    let built = pool.build();
    let started = started
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if built.is_err() {
        // The failed pool told its workers to stop: wait until they have.
        for handle in started {
            let _ = handle.join();
        }
    }
    built
}

/// Runs `f` on the worker threads `-j` asks for (the whole run: linting and reports).
fn with_workers(args: &LintArgs, f: fn(&LintArgs) -> i32) -> i32 {
    let threads = args.threads.map(|n| {
        if n > MAX_THREADS {
            eprintln!(
                "karplint: -j {n} is more than the {MAX_THREADS} worker threads karplint starts; using {MAX_THREADS}"
            );
        }
        n.clamp(1, MAX_THREADS)
    });
    let mut failed = None;
    for stack in WORKER_STACKS {
        match worker_pool(threads, stack) {
            Ok(pool) => {
                if let Some(e) = failed {
                    eprintln!(
                        "karplint: cannot start worker threads with {} MiB stacks ({e}); using {} MiB stacks, which a very deeply nested document may overflow",
                        WORKER_STACKS[0] >> 20,
                        stack >> 20
                    );
                }
                return pool.install(|| f(args));
            }
            Err(e) => failed = failed.or(Some(e)),
        }
    }
    if let Some(e) = failed {
        eprintln!("karplint: cannot start worker threads: {e}");
    }
    2
}

fn print_out(s: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    output_status(out.write_all(s.as_bytes()).and_then(|_| out.flush()))
}

/// The exit status of writing to standard output.
fn output_status(written: std::io::Result<()>) -> i32 {
    match written {
        Ok(()) => 0,
        // A closed pipe (`karplint | head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("karplint: writing output: {e}");
            2
        }
    }
}

/// The `karplint rules` table.
pub fn rules_table() -> String {
    let mut rows: Vec<(String, String, String)> = rules::BUILTIN_RULES
        .iter()
        .map(|(id, sev, s)| (id.to_string(), sev.to_string(), s.to_string()))
        .collect();
    rows.extend(rules::registry().iter().map(|r| {
        (
            r.meta().id.to_string(),
            r.meta().severity.to_string(),
            r.meta().summary.to_string(),
        )
    }));
    rows.sort();
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let mut out = format!("{:<w$}  {:<8}  {}\n", "RULE", "SEVERITY", "SUMMARY");
    for (id, sev, summary) in rows {
        out.push_str(&format!("{id:<w$}  {sev:<8}  {summary}\n"));
    }
    out
}

/// `karplint rules --format json`: every rule with its default severity, summary and doc
/// page.
pub fn rules_json() -> String {
    let mut rows: Vec<serde_json::Value> = rules::BUILTIN_RULES
        .iter()
        .map(|(id, sev, summary)| rule_json(id, *sev, summary))
        .chain(rules::registry().iter().map(|r| {
            let m = r.meta();
            rule_json(m.id, m.severity, m.summary)
        }))
        .collect();
    rows.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    let mut out = report::json_string(&serde_json::json!({ "version": 1, "rules": rows }));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn rule_json(id: &str, severity: crate::diagnostic::Severity, summary: &str) -> serde_json::Value {
    serde_json::json!({
        "id": id,
        "severity": severity.as_str(),
        "summary": summary,
        "url": rules::doc_url(id),
    })
}

/// `karplint explain RULE --format json`: the rule as `rules --format json` lists it, with
/// its doc (Markdown).
fn explain_json(id: &str, doc: &str) -> String {
    let summary = (rules::BUILTIN_RULES.iter())
        .map(|(id, sev, s)| (*id, *sev, *s))
        .chain(
            rules::registry()
                .iter()
                .map(|r| (r.meta().id, r.meta().severity, r.meta().summary)),
        )
        .find(|r| r.0 == id);
    let mut v = match summary {
        Some((id, sev, s)) => rule_json(id, sev, s),
        None => serde_json::json!({ "id": id }),
    };
    v["version"] = serde_json::json!(1);
    v["doc"] = serde_json::json!(doc);
    let mut out = report::json_string(&v);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// The `karplint explain RULE` text.
pub fn explain(rule: &str) -> Option<&'static str> {
    if let Some(doc) = rules::builtin_doc(rule) {
        return Some(doc);
    }
    rules::registry()
        .iter()
        .find(|r| r.meta().id == rule)
        .map(|r| r.meta().doc)
}

fn run_instance_types(args: &LintArgs) -> i32 {
    let outcome = match lint_outcome(args, Mode::InstanceTypes) {
        Ok(o) => o.outcome,
        Err(code) => return code,
    };
    let mut s = serde_json::to_string(&outcome.instance_types).unwrap_or_default();
    s.push('\n');
    print_out(&s)
}

/// `karplint plan`: the table (human), one line per workload (concise), Markdown or JSON,
/// to the outputs `--format`/`--output` pair; exit 1 when a workload would stay Pending and
/// `--fail-on` is not `never`.
fn run_plan(args: &LintArgs) -> i32 {
    let dests = match destinations(&args.format, &args.output) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("karplint: {e}");
            return 2;
        }
    };
    if let Some((format, _)) = dests
        .iter()
        .find(|(f, _)| matches!(f, Format::Sarif | Format::Github))
    {
        let name = format_name(*format);
        eprintln!(
            "karplint: `plan` has no {name} format; use human, concise, markdown or json (lint findings: `karplint --format {name}`)"
        );
        return 2;
    }
    let linted = match lint_outcome(args, Mode::Plan) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let nodepools_missing = linted.nodepools_missing();
    let (mut outcome, fail_on) = (linted.outcome, linted.fail_on);
    if let Some((output, input)) = output_over_input(&dests, &outcome.report.sources) {
        eprintln!(
            "karplint: refusing to write a report to {}: it is the input {} (linted or read as context); choose another --output",
            shown(&output),
            report::escape::line(&input)
        );
        return 2;
    }
    plan::locate(&mut outcome.plan, &outcome.report.sources);
    let failing = fail_on.threshold().is_some();
    let rows: Vec<plan::PlanRow> = if args.quiet {
        (outcome.plan.iter())
            .filter(|r| failing && plan::stays_pending(r))
            .cloned()
            .collect()
    } else {
        outcome.plan.clone()
    };
    // What the run assumed or left out, as the lint says it (the cost has its own note).
    let notes = if args.quiet {
        Vec::new()
    } else {
        outcome.report.notes.clone()
    };
    let mut code = 0;
    for (format, dest) in &dests {
        let write = |w: &mut dyn Write| -> std::io::Result<()> {
            let cost = outcome.cost.as_ref().filter(|_| !args.quiet);
            let text = match format {
                Format::Json => {
                    return plan::write_json(&rows, outcome.cost.as_ref(), &notes, w);
                }
                Format::Markdown => {
                    plan::render_markdown(&rows)
                        + &cost.map_or_else(String::new, |c| cost::render_markdown(&rows, c))
                }
                Format::Concise => plan::render_concise(&rows),
                _ if args.quiet => plan::render_table(&rows)
                    .split_once('\n')
                    .map_or_else(String::new, |(_, body)| body.to_string()),
                _ => {
                    plan::render_table(&rows)
                        + &plan::summary_line(&rows)
                        + &cost.map_or_else(String::new, |c| cost::render_text(&rows, c))
                        + &plan::render_notes(&notes)
                }
            };
            w.write_all(text.as_bytes())
        };
        code = code.max(write_to(dest, write));
    }
    if nodepools_missing {
        return refuse_unchecked();
    }
    if code != 0 || !outcome.read_errors.is_empty() {
        return 2;
    }
    i32::from(failing && outcome.plan.iter().any(plan::stays_pending))
}

/// Writes one report to its destination; the exit status of writing it.
fn write_to(dest: &Destination, write: impl Fn(&mut dyn Write) -> std::io::Result<()>) -> i32 {
    match dest {
        Destination::Stdout => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            output_status(write(&mut out).and_then(|_| out.flush()))
        }
        Destination::File(p) => match report::create_output(p).and_then(|f| {
            let mut out = std::io::BufWriter::new(f);
            write(&mut out)?;
            out.flush()
        }) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("karplint: writing {}: {e}", shown(p));
                2
            }
        },
    }
}

/// A path from the command line as a message shows it: no control character raw.
fn shown(p: &Path) -> String {
    report::escape::line(&p.display().to_string()).into_owned()
}

/// The width the human report is laid out in: `COLUMNS` when it is a number (an override,
/// as clap and ripgrep take it), else the width of the terminal on standard output, else
/// 100 (a pipe or a file).
fn report_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .or_else(|| {
            terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| usize::from(w.0))
        })
        .unwrap_or(100)
}

/// Whether the human and concise reports to `dest` are coloured: `--color always`; never
/// with `--no-color`, `--color never`, or to a file. Otherwise (`auto`) anstream decides as
/// clap does for standard output: never with NO_COLOR, always with CLICOLOR_FORCE, never
/// with CLICOLOR=0, else on a terminal that supports colour (not TERM=dumb). FORCE_COLOR
/// forces it as CLICOLOR_FORCE does; both only when set to something else than `0` or
/// `false` (anstream would take CLICOLOR_FORCE=0 as forcing), and never over NO_COLOR.
fn colored(args: &LintArgs, dest: &Destination) -> bool {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let forced = |k: &str| var(k).is_some_and(|v| v != "0" && v != "false");
    match args.color {
        Some(ColorChoice::Always) => true,
        Some(ColorChoice::Never) => false,
        _ if args.no_color || *dest != Destination::Stdout || var("NO_COLOR").is_some() => false,
        _ if forced("FORCE_COLOR") || forced("CLICOLOR_FORCE") => true,
        _ if var("CLICOLOR_FORCE").is_some() => std::io::stdout().is_terminal(),
        _ => anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never,
    }
}

/// Where one report goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    Stdout,
    File(PathBuf),
}

/// Pairs `--format` with `--output` in order (see `--help`). At most one report may go to
/// standard output.
pub fn destinations(
    formats: &[Format],
    outputs: &[PathBuf],
) -> Result<Vec<(Format, Destination)>, UsageError> {
    let formats: Vec<Format> = if formats.is_empty() {
        vec![Format::Human; outputs.len().max(1)]
    } else {
        formats.to_vec()
    };
    if outputs.len() > formats.len() {
        return Err(UsageError::MoreOutputsThanFormats {
            outputs: outputs.len(),
            formats: formats.len(),
        });
    }
    let pairs: Vec<(Format, Destination)> = formats
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let d = match outputs.get(i) {
                Some(p) if p.as_os_str() != "-" => Destination::File(p.clone()),
                _ => Destination::Stdout,
            };
            (*f, d)
        })
        .collect();
    if pairs.iter().filter(|p| p.1 == Destination::Stdout).count() > 1 {
        return Err(UsageError::SeveralToStdout);
    }
    let files: Vec<&PathBuf> = (pairs.iter())
        .filter_map(|(_, d)| match d {
            Destination::File(p) => Some(p),
            Destination::Stdout => None,
        })
        .collect();
    for (i, a) in files.iter().enumerate() {
        if files[..i].iter().any(|b| same_file(a, b)) {
            return Err(UsageError::SameOutput(shown(a)));
        }
    }
    Ok(pairs)
}

/// Whether two output paths name one file: the same spelling, or (when they exist) the
/// same file.
fn same_file(a: &Path, b: &Path) -> bool {
    if crate::kustomize::normal(a) == crate::kustomize::normal(b) {
        return true;
    }
    matches!(
        (std::fs::canonicalize(a), std::fs::canonicalize(b)),
        (Ok(x), Ok(y)) if x == y
    )
}

/// Loads the config that applies: `--config`, else the nearest `.karplint.yaml` above the
/// first linted path that has one (see [`discover_configs`]).
fn load_config(args: &LintArgs) -> Result<Option<Config>, i32> {
    if args.no_config {
        return Ok(None);
    }
    let path = match &args.config {
        Some(p) => Some(p.clone()),
        None => discover_configs(&args.paths).applied,
    };
    let Some(path) = path else { return Ok(None) };
    match config::load(&path, &rules::known_ids(), args.max_file_size) {
        Ok(c) if args.config.is_none() => Ok(Some(anchored(c))),
        Ok(c) => Ok(Some(c)),
        Err(e) => {
            let mut out = String::new();
            let theme = if std::io::stderr().is_terminal() {
                miette::GraphicalTheme::unicode()
            } else {
                miette::GraphicalTheme::unicode_nocolor()
            };
            let handler = miette::GraphicalReportHandler::new_themed(theme).with_links(false);
            if handler.render_report(&mut out, &*e).is_err() {
                out = format!("karplint: {e}\n");
            }
            eprint!("{out}");
            Err(2)
        }
    }
}

/// A discovered config in a directory below the working directory (`karplint tree` run
/// beside `tree/.karplint.yaml`), with its `include`/`exclude` globs that name a path
/// (`generated/**`) anchored at its directory (`tree/generated/**`), since the paths they
/// are matched against are as given, relative to the working directory. Bare names
/// (`values.yaml`) and `**/` globs match anywhere, as they did.
fn anchored(mut c: Config) -> Config {
    let Some(dir) = c.path.parent().filter(|d| {
        !d.as_os_str().is_empty()
            && d.is_relative()
            && d.components()
                .all(|x| matches!(x, std::path::Component::Normal(_)))
    }) else {
        return c;
    };
    let Some(dir) = dir.to_str().map(|d| d.replace('\\', "/")) else {
        return c;
    };
    let anchor = |g: &mut String| {
        if g.contains('/') && !g.starts_with("**") && !g.starts_with('/') {
            *g = format!("{dir}/{}", g.trim_start_matches("./"));
        }
    };
    c.include.iter_mut().for_each(anchor);
    c.exclude.iter_mut().for_each(anchor);
    c
}

/// The configs of the linted paths: the nearest `.karplint.yaml` above each (a directory
/// from itself, a file from its directory, `-` from the working directory), up to the
/// repository root, as ruff finds its settings. One config applies to the whole run: the
/// first path's that has one; the paths under another config, or under none while one
/// applies, are named in `others`.
struct Discovered {
    applied: Option<PathBuf>,
    /// (path, its own config) for the paths the applied config is not theirs.
    others: Vec<(PathBuf, Option<PathBuf>)>,
}

fn discover_configs(paths: &[PathBuf]) -> Discovered {
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut by_dir: std::collections::BTreeMap<PathBuf, Option<PathBuf>> = Default::default();
    let mut found: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
    let dot = [PathBuf::from(".")];
    let paths = if paths.is_empty() { &dot[..] } else { paths };
    for p in paths {
        let start = if p.as_os_str() == "-" || p.is_dir() {
            cwd.join(p.as_os_str().to_str().filter(|s| *s != "-").unwrap_or("."))
        } else {
            match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => cwd.join(d),
                _ => cwd.clone(),
            }
        };
        let config = by_dir
            .entry(start.clone())
            .or_insert_with(|| config::discover(&start).map(|c| relative_to_cwd(&c)))
            .clone();
        found.push((p.clone(), config));
    }
    let applied = found.iter().find_map(|(_, c)| c.clone());
    let others = match &applied {
        None => Vec::new(),
        Some(a) => (found.into_iter())
            .filter(|(_, c)| c.as_ref().is_none_or(|c| !same_file(c, a)))
            .collect(),
    };
    Discovered { applied, others }
}

/// The note on linted paths whose own config is not the one applied, or `None`.
fn other_configs_note(args: &LintArgs) -> Option<String> {
    if args.no_config || args.config.is_some() {
        return None;
    }
    let d = discover_configs(&args.paths);
    let applied = d.applied?;
    if d.others.is_empty() {
        return None;
    }
    let mut groups: Vec<(Option<PathBuf>, Vec<String>)> = Vec::new();
    for (path, config) in d.others {
        let name = shown(&path);
        match groups.iter_mut().find(|(c, _)| *c == config) {
            Some((_, names)) => names.push(name),
            None => groups.push((config, vec![name])),
        }
    }
    let parts: Vec<String> = (groups.into_iter())
        .map(|(config, names)| match config {
            Some(c) => format!("{} under {}", names.join(", "), shown(&c)),
            None => format!("{} under no config", names.join(", ")),
        })
        .collect();
    Some(format!(
        "config {} applied to every path of this run, also to {}; lint those paths in a run of their own to apply their config",
        shown(&applied),
        parts.join("; ")
    ))
}

/// A discovered config path, shown relative to the working directory when it is below it.
fn relative_to_cwd(p: &Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| p.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| p.to_path_buf())
}

/// A command line karplint cannot run (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    #[error("{outputs} --output given for {formats} --format; give one --format per --output")]
    MoreOutputsThanFormats { outputs: usize, formats: usize },
    #[error(
        "more than one --format would write to standard output; pair each with an --output FILE"
    )]
    SeveralToStdout,
    #[error("two --format reports would write to --output {0}; give each its own file")]
    SameOutput(String),
    #[error("--rule {0:?}: expected ID=LEVEL")]
    RuleSyntax(String),
    #[error("--rule {arg:?}: unknown rule {id:?}; {hint}`karplint rules` lists them")]
    UnknownRule {
        arg: String,
        id: String,
        /// "did you mean `x`? ", or empty.
        hint: String,
    },
    #[error("--rule {arg:?}: level must be off, info, warning or error{hint}")]
    RuleLevel {
        arg: String,
        /// "; did you mean `x`?", or empty.
        hint: String,
    },
    #[error("--karpenter-version: {error}; {help}")]
    KarpenterVersion {
        error: crate::karpenter::version::VersionError,
        /// Did you mean, and the known versions.
        help: String,
    },
}

/// Flags over the file: the options of this run and its `--fail-on`.
pub fn merge(args: &LintArgs, cfg: Option<Config>) -> Result<(LintOptions, FailOn), UsageError> {
    let cfg = cfg.unwrap_or_default();
    let pick = |flag: &Vec<String>, file: Vec<String>| {
        if flag.is_empty() { file } else { flag.clone() }
    };
    let mut levels = cfg.rules;
    let known = rules::known_ids();
    for r in &args.rule {
        let (id, level) = r
            .split_once('=')
            .ok_or_else(|| UsageError::RuleSyntax(r.clone()))?;
        if !known.contains(&id) {
            return Err(UsageError::UnknownRule {
                arg: r.clone(),
                id: id.to_string(),
                hint: crate::suggest::did_you_mean(id, &known),
            });
        }
        let level = Level::parse(level).ok_or_else(|| UsageError::RuleLevel {
            arg: r.clone(),
            hint: crate::suggest::closest(level, &["off", "info", "warning", "error"])
                .map_or_else(String::new, |l| format!("; did you mean `{l}`?")),
        })?;
        levels.insert(id.to_string(), level);
    }
    let opts = LintOptions {
        paths: args.paths.clone(),
        context: if args.context.is_empty() {
            cfg.context
        } else {
            args.context.clone()
        },
        include: pick(&args.include, cfg.include),
        exclude: pick(&args.exclude, cfg.exclude),
        walk: engine::WalkOptions {
            follow: args.follow,
            hidden: args.hidden,
            no_ignore: args.no_ignore,
            no_force_exclude: args.no_force_exclude,
        },
        max_file_size: args.max_file_size,
        max_batch_pods: args.max_batch_pods,
        rules: levels,
        instance_types: args
            .instance_types
            .clone()
            .or_else(|| cfg.cluster.as_ref().and_then(|c| c.instance_types.clone())),
        cluster: cfg
            .cluster
            .as_ref()
            .map(|c| c.to_facts())
            .unwrap_or_default(),
        plan: false,
        plan_counts_types: true,
        export_instance_types: false,
        kustomize: args.kustomize.or(cfg.kustomize).unwrap_or_default(),
        kustomize_bin: match (&args.kustomize_bin, &cfg.kustomize_bin) {
            (Some(p), _) => Some((p.clone(), crate::kustomize::Chosen::Flag)),
            (None, Some(p)) => Some((p.clone(), crate::kustomize::Chosen::Config)),
            (None, None) => None,
        },
        kustomize_timeout: (args.kustomize_timeout.or(cfg.kustomize_timeout)).map_or(
            crate::kustomize::DEFAULT_DEADLINE,
            std::time::Duration::from_secs,
        ),
        kustomize_roots: cfg.kustomize_roots.clone(),
        clusters: Vec::new(),
        cache_dir: (!args.no_cache)
            .then(|| {
                args.cache_dir
                    .clone()
                    .or_else(crate::kustomize::Cache::default_dir)
            })
            .flatten(),
        untrusted: (cfg.path.parent())
            .map(|d| {
                if d.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    d
                }
            })
            .map(Path::to_path_buf)
            .into_iter()
            .collect(),
    };
    let fail_on = args.fail_on.or(cfg.fail_on).unwrap_or(FailOn::Error);
    let mut opts = opts;
    opts.cluster.karpenter = match &args.karpenter_version {
        Some(v) => KarpenterVersion::parse(v).map_err(|error| UsageError::KarpenterVersion {
            help: error.help(v),
            error,
        })?,
        None => cfg.karpenter_version.unwrap_or_default(),
    };
    opts.cluster.node_overlays_off = cfg.node_overlay == Some(false);
    for c in &cfg.clusters {
        let dirs: Vec<PathBuf> = c.paths.iter().chain(&c.context).cloned().collect();
        // A cluster's own paths are its context too: a named file in it meets its NodePools.
        opts.context.extend(dirs.iter().cloned());
        let facts = c.cluster.as_ref().map(|section| {
            let mut facts = section.to_facts();
            facts.karpenter = opts.cluster.karpenter;
            facts.node_overlays_off = opts.cluster.node_overlays_off;
            facts
        });
        opts.clusters.push(engine::ClusterScope {
            name: c.name.clone(),
            dirs,
            facts,
        });
    }
    Ok((opts, fail_on))
}

/// A run of the pipeline, with what decides its exit code.
struct Linted {
    outcome: engine::Outcome,
    fail_on: FailOn,
    /// `--require-nodepools` or `requireNodePools: true`.
    require_nodepools: bool,
}

impl Linted {
    /// With `--require-nodepools`, whether the scheduling rules did not run for want of a
    /// NodePool (exit code 2, after the reports: see [`refuse_unchecked`]).
    fn nodepools_missing(&self) -> bool {
        self.require_nodepools
            && (self.outcome.report.notes.iter()).any(|n| n.message == engine::NO_NODEPOOL)
    }
}

/// The error of a run that `--require-nodepools` fails: exit code 2.
fn refuse_unchecked() -> i32 {
    eprintln!(
        "karplint: error: no NodePool or Provisioner was read, so the scheduling rules did not run (--require-nodepools); pass the directory that holds your NodePools with --context, or list it under `context:` in .karplint.yaml"
    );
    2
}

/// Runs the pipeline for the lint arguments (config file, flags, threads); `Err` carries
/// the exit code.
fn lint_outcome(args: &LintArgs, mode: Mode) -> Result<Linted, i32> {
    let cfg = load_config(args)?;
    let require_nodepools = args.require_nodepools
        || cfg
            .as_ref()
            .is_some_and(|c| c.require_node_pools == Some(true));
    let applied = cfg.as_ref().map(|c| c.path.display().to_string());
    let version_chosen = args.karpenter_version.is_some()
        || cfg.as_ref().is_some_and(|c| c.karpenter_version.is_some());
    let (mut opts, fail_on) = merge(args, cfg).map_err(|e| {
        eprintln!("karplint: {e}");
        2
    })?;
    opts.plan = matches!(mode, Mode::Plan | Mode::Diff);
    opts.plan_counts_types = mode != Mode::Diff;
    opts.export_instance_types = mode == Mode::InstanceTypes;
    // Progress only for a person watching: never in pipes, CI logs or machine formats.
    crate::progress::ENABLED.store(
        !args.quiet
            && args.format.iter().all(|f| *f == Format::Human)
            && std::io::stderr().is_terminal(),
        std::sync::atomic::Ordering::Relaxed,
    );
    let mut outcome = engine::lint(&opts, &mut std::io::stdin()).map_err(|e| {
        eprintln!("karplint: {}", report::escape::text(&e.to_string()));
        2
    })?;
    // Say which config shaped the run, and the Karpenter version when one was chosen: a
    // note in every lint format, else on standard error.
    let version = opts.cluster.karpenter;
    let note = match (applied, version_chosen) {
        (Some(path), false) => Some(format!("config {path} applied")),
        (Some(path), true) => Some(format!(
            "config {path} applied, judged as Karpenter {version}"
        )),
        (None, true) => Some(format!(
            "judged as Karpenter {version} (--karpenter-version)"
        )),
        (None, false) => None,
    };
    for note in note.into_iter().chain(other_configs_note(args)) {
        if matches!(mode, Mode::Lint | Mode::Diff) {
            outcome.report.notes.push(report::Note::new("config", note));
        } else {
            eprintln!("karplint: {note}");
        }
    }
    Ok(Linted {
        outcome,
        fail_on,
        require_nodepools,
    })
}

fn run_lint(args: &LintArgs) -> i32 {
    let dests = match destinations(&args.format, &args.output) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("karplint: {e}");
            return 2;
        }
    };
    let old = match (args.baseline.as_deref())
        .map(|p| Baseline::read(p, args.max_file_size))
        .transpose()
    {
        Ok(b) => b,
        Err(e) => {
            eprintln!("karplint: {}", report::escape::text(&e.to_string()));
            return 2;
        }
    };
    let linted = match lint_outcome(args, Mode::Lint) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let nodepools_missing = linted.nodepools_missing();
    let (mut outcome, fail_on) = (linted.outcome, linted.fail_on);
    if let Some(path) = &args.write_baseline {
        let dest = [(Format::Json, Destination::File(path.clone()))];
        if let Some((_, input)) = output_over_input(&dest, &outcome.report.sources) {
            eprintln!(
                "karplint: refusing to write the baseline to {}: it is the input {}; choose another file",
                shown(path),
                report::escape::line(&input)
            );
            return 2;
        }
        return write_baseline(&outcome, path);
    }
    if let (Some(old), Some(path)) = (&old, &args.baseline) {
        baseline::apply(&mut outcome.report, old, path);
    }
    let report = &outcome.report;
    if let Some((output, input)) = output_over_input(&dests, &report.sources) {
        eprintln!(
            "karplint: refusing to write a report to {}: it is the input {} (linted or read as context); choose another --output",
            shown(&output),
            report::escape::line(&input)
        );
        return 2;
    }
    let quotes_source = !args.statistics && dests.iter().any(|(f, _)| *f == Format::Human);
    let texts = report::Texts::load_with(report, quotes_source);
    let width = report_width();
    for e in &outcome.read_errors {
        // Paths come from the tree: no control character reaches the terminal.
        eprintln!("karplint: {}", report::escape::text(&e.to_string()));
    }
    // Nothing could be read (`karplint nonexist`): the errors say it all, with no empty
    // report after them.
    if !outcome.read_errors.is_empty() && report.sources.iter().all(|s| s.context) {
        return 2;
    }
    if outcome.read_errors.is_empty() {
        warn_if_nothing_linted(args, report);
    }
    let shown = report::Shown {
        quiet: args.quiet,
        at_least: fail_on.threshold(),
    };
    // Where the whole report is, for a Markdown table cut short: a JSON or SARIF file of
    // the same run.
    let full = dests.iter().find_map(|(f, d)| match d {
        Destination::File(p) if matches!(f, Format::Json | Format::Sarif) => {
            Some(p.display().to_string())
        }
        _ => None,
    });
    let mut code = 0;
    for (format, dest) in &dests {
        let style = human::Style {
            color: colored(args, dest),
            width,
        };
        // JSON and SARIF stream into the destination: a large run's output (megabytes) is
        // never held whole beside the model.
        let write = |w: &mut dyn Write| -> std::io::Result<()> {
            let text = match format {
                Format::Json => return json::write(report, &texts, w),
                Format::Sarif => return sarif::write(report, &texts, w),
                Format::Human | Format::Concise if args.statistics => {
                    human::statistics(report, shown) + &renders_line(outcome.render_counts)
                }
                Format::Human => human::render_shown(report, &texts, style, shown),
                Format::Concise => human::render_concise(report, &texts, style, shown),
                Format::Github => github::render(report, &texts, shown),
                Format::Markdown => markdown::render(report, &texts, shown, full.as_deref()),
            };
            w.write_all(text.as_bytes())
        };
        code = code.max(write_to(dest, write));
    }
    if nodepools_missing {
        return refuse_unchecked();
    }
    if code != 0 || !outcome.read_errors.is_empty() {
        return 2;
    }
    let failed = fail_on
        .threshold()
        .is_some_and(|t| report.findings.iter().any(|f| f.severity >= t));
    i32::from(failed)
}

/// `--write-baseline FILE`: records the run's findings there and says how many; exit 2,
/// writing nothing, when a file could not be read (the baseline would miss its findings).
fn write_baseline(outcome: &engine::Outcome, path: &Path) -> i32 {
    for e in &outcome.read_errors {
        eprintln!("karplint: {}", report::escape::text(&e.to_string()));
    }
    if !outcome.read_errors.is_empty() {
        eprintln!("karplint: baseline {} not written", shown(path));
        return 2;
    }
    let b = Baseline::of(&outcome.report, path);
    if let Err(e) = b.write(path) {
        eprintln!("karplint: {}", report::escape::text(&e.to_string()));
        return 2;
    }
    print_out(&format!(
        "karplint: {} finding(s) recorded in the baseline {}\n",
        b.findings.len(),
        report::escape::line(&path.display().to_string())
    ))
}

/// A run that found no manifest passes, but never in silence: a `warning:` on standard
/// error names the paths (the exit code stays 0), with a hint when standard input is a pipe
/// that `-` was not given to read.
fn warn_if_nothing_linted(args: &LintArgs, report: &report::Report) {
    // Documents that are not objects (a chart's Chart.yaml and values.yaml) do not count.
    if report.summary.objects > 0 || !report.findings.is_empty() {
        return;
    }
    let paths: Vec<String> = (args.paths.iter())
        .map(|p| report::escape::text(&p.display().to_string()).into_owned())
        .collect();
    let paths = if paths.is_empty() {
        ".".to_string()
    } else {
        paths.join(", ")
    };
    eprintln!("warning: no Kubernetes manifests found in {paths}");
    let stdin_named = args.paths.iter().any(|p| p.as_os_str() == "-");
    if !stdin_named && !std::io::stdin().is_terminal() && stdin_is_pipe() {
        eprintln!(
            "hint: standard input is a pipe; to lint what is piped in, pass `-` (e.g. `helm template ... | karplint -`)"
        );
    }
}

/// Whether standard input is a pipe (`cmd | karplint`), as opposed to a terminal or
/// nothing at all.
fn stdin_is_pipe() -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata("/dev/stdin").is_ok_and(|m| m.file_type().is_fifo())
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// An `--output` file that is one of the run's inputs (linted, or read as context), with
/// that input's name: writing the report there would destroy it.
fn output_over_input(
    dests: &[(Format, Destination)],
    sources: &[report::Source],
) -> Option<(PathBuf, String)> {
    for (_, dest) in dests {
        let Destination::File(p) = dest else { continue };
        // A file that is not there yet is no input, and writing to what is not a regular
        // file (`/dev/null`, a pipe) replaces none.
        if !std::fs::metadata(p).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let Some(out) = file_id(p) else { continue };
        let input = (sources.iter()).find(|s| s.path().and_then(file_id).is_some_and(|i| i == out));
        if let Some(s) = input {
            return Some((p.clone(), s.name.clone()));
        }
    }
    None
}

/// What tells one file from another, whatever path names it (a link, another spelling):
/// its device and inode, one `stat`; elsewhere its path with every link resolved.
#[cfg(unix)]
fn file_id(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok()
}

/// `--statistics`' line on how the kustomization roots were had, when there were any.
fn renders_line(c: crate::kustomize::RenderCounts) -> String {
    if c == crate::kustomize::RenderCounts::default() {
        return String::new();
    }
    format!(
        "kustomizations: {} rendered, {} from the cache, {} not rendered (no named file feeds them)\n",
        c.rendered, c.cached, c.not_fed
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_pair_with_outputs_in_order() {
        let d = destinations(
            &[Format::Github, Format::Sarif],
            &[PathBuf::from("-"), PathBuf::from("k.sarif")],
        )
        .unwrap();
        assert_eq!(d[0], (Format::Github, Destination::Stdout));
        assert_eq!(d[1], (Format::Sarif, Destination::File("k.sarif".into())));
        assert_eq!(
            destinations(&[], &[]).unwrap()[0],
            (Format::Human, Destination::Stdout)
        );
        assert!(destinations(&[Format::Json, Format::Sarif], &[]).is_err());
        assert!(destinations(&[Format::Json], &["a".into(), "b".into()]).is_err());
        // One unpaired format goes to stdout.
        let d = destinations(&[Format::Sarif, Format::Human], &["k.sarif".into()]).unwrap();
        assert_eq!(d[1], (Format::Human, Destination::Stdout));
    }
}
