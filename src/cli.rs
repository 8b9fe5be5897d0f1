//! Command line: clap definitions, and the glue from arguments to the pipeline and from the
//! report to stdout and an exit code (0 clean, 1 findings at or above `--fail-on`, 2 usage,
//! configuration or I/O errors).

use crate::diagnostic::Severity;
use crate::lint::{self, LintOptions};
use crate::report::{self, human, json};
use crate::rules;
use clap::{Parser, Subcommand, ValueEnum};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "karplint",
    version,
    about = "Tells you, from the YAML alone, why Karpenter would leave a pod Pending",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub lint: LintArgs,
}

#[derive(Debug, clap::Args)]
pub struct LintArgs {
    /// Files or directories to lint; `-` reads one YAML stream from standard input
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Exit with 1 when a finding at or above this severity is reported
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
    /// Skip files matching this glob (repeatable)
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Lint only files matching this glob (repeatable; default *.yaml, *.yml, *.json)
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Read cluster objects (NodePools, DaemonSets, LimitRanges, …) from here without
    /// reporting on them (repeatable)
    #[arg(long, value_name = "PATH")]
    pub context: Vec<PathBuf>,
    /// Worker threads (default: one per core)
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,
    /// Disable colours (also when NO_COLOR is set or stdout is not a terminal)
    #[arg(long)]
    pub no_color: bool,
    /// Follow symbolic links while walking directories
    #[arg(long)]
    pub follow: bool,
    /// Instance types from `aws ec2 describe-instance-types` JSON instead of the built-in
    /// catalog
    #[arg(long, value_name = "FILE")]
    pub instance_types: Option<PathBuf>,
    /// Skip files larger than this many bytes
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024 * 1024)]
    pub max_file_size: u64,
}

#[derive(Debug, Subcommand)]
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
    Plan(LintArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

impl FailOn {
    fn threshold(self) -> Option<Severity> {
        match self {
            FailOn::Error => Some(Severity::Error),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Info => Some(Severity::Info),
            FailOn::Never => None,
        }
    }
}

/// Runs the command line and returns the process exit code.
pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Some(Command::Rules) => print_out(&rules_table()),
        Some(Command::Explain { rule }) => match explain(&rule) {
            Some(doc) => print_out(doc),
            None => {
                eprintln!("karplint: unknown rule {rule:?}; `karplint rules` lists them");
                2
            }
        },
        Some(Command::Plan(args)) => run_plan(&args),
        None => run_lint(&cli.lint),
    }
}

fn print_out(s: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
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
            r.id().to_string(),
            r.default_severity().to_string(),
            r.summary().to_string(),
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

/// The `karplint explain RULE` text.
pub fn explain(rule: &str) -> Option<&'static str> {
    if rule == "parse-error" {
        return Some(include_str!("../lints/parse-error.md"));
    }
    rules::registry()
        .into_iter()
        .find(|r| r.id() == rule)
        .map(|r| r.doc())
}

fn run_plan(args: &LintArgs) -> i32 {
    let outcome = match lint_outcome(args) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let text = match args.format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&outcome.plan).unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Human => crate::report::plan::render_table(&outcome.plan),
    };
    print_out(&text)
}

/// Runs the pipeline for the lint arguments; `Err` carries the exit code.
fn lint_outcome(args: &LintArgs) -> Result<lint::Outcome, i32> {
    // Deserializing is recursive: a document nested up to the parser's depth limit needs
    // more than the 2 MiB default stack of a worker thread (in debug builds well before
    // that limit). The stack is reserved, not committed, so this costs no memory.
    let mut pool = rayon::ThreadPoolBuilder::new().stack_size(64 << 20);
    if let Some(n) = args.threads {
        pool = pool.num_threads(n.max(1));
    }
    if let Err(e) = pool.build_global() {
        eprintln!("karplint: cannot start worker threads: {e}");
        return Err(2);
    }
    // Progress only for a person watching: never in pipes, CI logs or JSON output.
    crate::progress::ENABLED.store(
        args.format == Format::Human && std::io::stderr().is_terminal(),
        std::sync::atomic::Ordering::Relaxed,
    );
    let opts = LintOptions {
        paths: args.paths.clone(),
        context: args.context.clone(),
        include: args.include.clone(),
        exclude: args.exclude.clone(),
        follow: args.follow,
        max_file_size: args.max_file_size,
        instance_types: args.instance_types.clone(),
    };
    lint::lint(&opts, &mut std::io::stdin()).map_err(|e| {
        eprintln!("karplint: {e}");
        2
    })
}

fn run_lint(args: &LintArgs) -> i32 {
    let outcome = match lint_outcome(args) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let report = &outcome.report;
    let texts = report::Texts::load(report);
    let color = !args.no_color
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::io::stdout().is_terminal();
    let width = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(100);
    let text = match args.format {
        Format::Human => human::render(report, &texts, human::Style { color, width }),
        Format::Json => json::render(report, &texts),
    };
    for e in &outcome.io_errors {
        eprintln!("karplint: {e}");
    }
    let code = print_out(&text);
    if code != 0 || !outcome.io_errors.is_empty() {
        return 2;
    }
    let failed = args
        .fail_on
        .threshold()
        .is_some_and(|t| report.findings.iter().any(|f| f.severity >= t));
    i32::from(failed)
}
