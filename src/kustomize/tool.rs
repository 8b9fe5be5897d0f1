//! The render tool (`kustomize build`, else `kubectl kustomize`) as a subprocess karplint
//! keeps on a short leash.
//!
//! - **Which program.** Only from absolute `PATH` entries outside the linted and context
//!   trees (and the repositories holding them): an empty or relative entry (a trailing `:`
//!   is the working directory) is ignored, so a `kustomize` shipped in the linted tree never
//!   runs. `--kustomize-bin` names one; the config's `kustomizeBin` may too, but only a
//!   program outside those trees.
//! - **Its environment.** Cleared, then: a private `HOME` and config directories (no kubeconfig,
//!   no cloud credentials, no kustomize plugin home), an empty `KUBECONFIG`,
//!   `GIT_TERMINAL_PROMPT=0`, and `PATH` reduced to the trusted entries. Plugins, exec
//!   functions and Helm stay off (kustomize's defaults; karplint never enables them).
//! - **Its network.** Where `unshare -rn` works (Linux with unprivileged user namespaces),
//!   the tool runs in an empty network namespace; elsewhere karplint's own check of every
//!   field that may fetch is the only guard, and the run says so.
//! - **Its time.** Each build is killed after [`BUILD_TIMEOUT`], and all builds of a run
//!   share one deadline.
//! - **Signals.** On SIGTERM or SIGINT the running builds are killed and their temporary
//!   directories removed before karplint dies of the signal.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The tool that renders kustomizations.
#[derive(Debug, Clone)]
pub struct Tool {
    program: PathBuf,
    /// `build` for kustomize, `kustomize` for kubectl.
    verb: &'static str,
    /// Absolute `PATH` entries outside the untrusted trees, handed to the tool.
    path: Vec<PathBuf>,
}

/// Why a chosen render tool cannot be used (exit code 2).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ToolError {
    #[error("{source_of} {path}: not an executable file")]
    #[diagnostic(
        code(karplint::kustomize),
        help("name the kustomize or kubectl binary to render kustomizations with")
    )]
    NotExecutable {
        source_of: &'static str,
        path: String,
    },
    #[error(
        "{source_of} {path}: inside the linted or context tree; karplint never runs a program from what it reads"
    )]
    #[diagnostic(
        code(karplint::kustomize),
        help(
            "install kustomize outside the repository and name it with --kustomize-bin, or remove kustomizeBin from the config"
        )
    )]
    Untrusted {
        source_of: &'static str,
        path: String,
    },
}

/// Where a chosen tool was named: the command line is trusted, a config file (which may
/// come with the linted tree) is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chosen {
    Flag,
    Config,
}

impl Tool {
    /// `kustomize`, else `kubectl`, from the absolute `PATH` entries outside `untrusted`.
    pub fn find(untrusted: &[PathBuf]) -> Option<Tool> {
        let path = trusted_path(untrusted);
        let find = |name: &str| {
            path.iter()
                .map(|d| d.join(name))
                .find(|p| is_executable(p) && !inside_any(p, untrusted))
        };
        let (program, verb) = match find("kustomize") {
            Some(p) => (p, "build"),
            None => (find("kubectl")?, "kustomize"),
        };
        Some(Tool {
            program,
            verb,
            path,
        })
    }

    /// The program `--kustomize-bin` (or the config's `kustomizeBin`) names: kubectl when
    /// its file name starts with `kubectl`, else kustomize.
    pub fn chosen(program: &Path, from: Chosen, untrusted: &[PathBuf]) -> Result<Tool, ToolError> {
        let source_of = match from {
            Chosen::Flag => "--kustomize-bin",
            Chosen::Config => "kustomizeBin",
        };
        let shown = crate::discover::printable(program);
        if !is_executable(program) {
            return Err(ToolError::NotExecutable {
                source_of,
                path: shown,
            });
        }
        if from == Chosen::Config && (!program.is_absolute() || inside_any(program, untrusted)) {
            return Err(ToolError::Untrusted {
                source_of,
                path: shown,
            });
        }
        let name = program.file_name().unwrap_or_default().to_string_lossy();
        let verb = if name.starts_with("kubectl") {
            "kustomize"
        } else {
            "build"
        };
        // Absolute: a bare name would be looked up on the tool's `PATH`.
        let program = std::path::absolute(program).unwrap_or_else(|_| program.to_path_buf());
        Ok(Tool {
            program,
            verb,
            path: trusted_path(untrusted),
        })
    }

    /// `/usr/local/bin/kustomize build`: the program's full path, so the run says which
    /// binary rendered it.
    pub fn describe(&self) -> String {
        let program = crate::discover::printable(&self.program);
        format!("{program} {}", self.verb)
    }

    /// What names this tool in a cache key: its program, verb, size and modification
    /// time (an upgrade in place changes the last two).
    pub(super) fn identity(&self) -> String {
        let meta = std::fs::metadata(&self.program).ok();
        let mtime = (meta.as_ref().and_then(|m| m.modified().ok()))
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        format!(
            "{} {} {} {mtime}",
            self.program.display(),
            self.verb,
            meta.map_or(0, |m| m.len())
        )
    }

    /// The command that renders the kustomization in `dir` (a private temporary directory,
    /// which also serves as the tool's home), sandboxed as the module says.
    pub(super) fn command(&self, dir: &Path) -> Command {
        let mut command = match isolation() {
            Isolation::Namespace(unshare) => {
                let mut c = Command::new(unshare);
                c.args(["-rn", "--"]).arg(&self.program);
                c
            }
            Isolation::None(_) => Command::new(&self.program),
        };
        command.arg(self.verb).arg(dir);
        sandbox_env(&mut command, dir, &self.path);
        command
    }
}

/// The tool's environment: nothing of karplint's but the trusted `PATH`, a home of its own
/// in `dir`, and settings that keep git and kubectl from prompting or reaching a cluster.
fn sandbox_env(command: &mut Command, dir: &Path, path: &[PathBuf]) {
    let home = dir.join(".home");
    command
        .env_clear()
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_DATA_HOME", home.join(".local"))
        .env("TMPDIR", &home)
        .env("KUBECONFIG", dir.join(".kubeconfig"))
        .env("KUSTOMIZE_PLUGIN_HOME", home.join("no-plugins"))
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", dir.join(".gitconfig"))
        .env("GIT_ASKPASS", "")
        .env("SSH_ASKPASS", "")
        .env("LC_ALL", "C");
    if let Ok(joined) = std::env::join_paths(path) {
        command.env("PATH", joined);
    }
}

/// Prepares `dir` for [`Tool::command`]: the empty home, kubeconfig and git config the
/// environment names.
pub(super) fn prepare_home(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir(dir.join(".home"))?;
    std::fs::write(dir.join(".kubeconfig"), "")?;
    std::fs::write(dir.join(".gitconfig"), "")
}

/// The absolute entries of `PATH` outside `untrusted`, each once, in order.
fn trusted_path(untrusted: &[PathBuf]) -> Vec<PathBuf> {
    let Some(path) = std::env::var_os("PATH") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = Vec::new();
    for d in std::env::split_paths(&path) {
        if d.is_absolute() && !inside_any(&d, untrusted) && !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// Whether `p` (resolved through symbolic links when it exists) lies in one of `trees`
/// (canonical directories).
fn inside_any(p: &Path, trees: &[PathBuf]) -> bool {
    let resolved = std::fs::canonicalize(p).unwrap_or_else(|_| super::normal(p));
    trees.iter().any(|t| resolved.starts_with(t))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file() || p.with_extension("exe").is_file()
    }
}

/// The trees no program may come from: each linted and context path (a file's directory),
/// resolved, and the repository (the nearest directory holding `.git`) around each.
pub fn untrusted_trees(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for p in paths.iter().filter(|p| p.as_os_str() != "-") {
        let Ok(c) = std::fs::canonicalize(p) else {
            continue;
        };
        let dir = if c.is_dir() {
            c
        } else {
            c.parent().map_or(c.clone(), Path::to_path_buf)
        };
        if let Some(repo) = dir.ancestors().find(|d| d.join(".git").exists()) {
            out.push(repo.to_path_buf());
        }
        out.push(dir);
    }
    out.sort();
    out.dedup();
    out
}

/// How builds are kept off the network.
#[derive(Debug, Clone)]
pub enum Isolation {
    /// `unshare -rn` (this program) works: an empty network namespace.
    Namespace(PathBuf),
    /// No network namespace could be made, for this reason.
    None(String),
}

/// Whether `unshare -rn` works here, tried once per run.
pub fn isolation() -> &'static Isolation {
    static ISOLATION: OnceLock<Isolation> = OnceLock::new();
    ISOLATION.get_or_init(probe_isolation)
}

fn probe_isolation() -> Isolation {
    if !cfg!(target_os = "linux") {
        return Isolation::None("network namespaces are a Linux feature".into());
    }
    let Some(unshare) = ["/usr/bin/unshare", "/bin/unshare"]
        .iter()
        .map(PathBuf::from)
        .find(|p| is_executable(p))
    else {
        return Isolation::None("no unshare in /usr/bin or /bin".into());
    };
    let probe = Command::new(&unshare)
        .args(["-rn", "--", "/bin/sh", "-c", "exit 0"])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match probe {
        Ok(s) if s.success() => Isolation::Namespace(unshare),
        Ok(_) => Isolation::None("unshare -rn is not permitted here".into()),
        Err(e) => Isolation::None(format!("unshare -rn: {e}")),
    }
}

/// How long one build may take before karplint gives up on it.
pub const BUILD_TIMEOUT: Duration = Duration::from_secs(120);

/// What a build printed, or why it has none.
pub(super) enum Ran {
    Done(std::process::Output),
    /// Killed: it ran past its time (the build's limit or the run's deadline).
    TimedOut(Duration),
    /// Its standard output went over this many bytes (`--max-file-size`): killed.
    TooLarge(u64),
}

/// Runs `command` until it exits, `deadline` passes, or its output exceeds `max` bytes;
/// the temporary directory `dir` is removed with it should a signal end karplint first.
pub(super) fn run_bounded(
    mut command: Command,
    deadline: Instant,
    max: u64,
    dir: &Path,
) -> Result<Ran, String> {
    install_signal_handler();
    #[cfg(unix)]
    {
        // Its own process group: a terminal's Ctrl-C reaches karplint, which kills it.
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = (command.stdin(Stdio::null()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let over = Arc::new(AtomicBool::new(false));
    let stdout = drain(
        child.stdout.take().map(|p| Box::new(p) as _),
        max,
        over.clone(),
    );
    let stderr = drain_tail(child.stderr.take().map(|p| Box::new(p) as _), 64 * 1024);
    let child = Arc::new(Mutex::new(child));
    let entry = running().register(child.clone(), dir);
    let start = Instant::now();
    let ended = wait_bounded(&child, deadline, &over);
    running().unregister(entry);
    let status = match ended {
        Ok(Some(status)) => status,
        Ok(None) if over.load(Ordering::Relaxed) => return Ok(Ran::TooLarge(max)),
        Ok(None) => return Ok(Ran::TimedOut(start.elapsed())),
        Err(e) => return Err(e),
    };
    let out = stdout.join().unwrap_or_default();
    if over.load(Ordering::Relaxed) {
        return Ok(Ran::TooLarge(max));
    }
    Ok(Ran::Done(std::process::Output {
        status,
        stdout: out,
        stderr: stderr.join().unwrap_or_default(),
    }))
}

/// Waits for `child` to exit; kills it (`None`) when `deadline` passes or its output goes
/// over the limit (`over`).
fn wait_bounded(
    child: &Mutex<Child>,
    deadline: Instant,
    over: &AtomicBool,
) -> Result<Option<std::process::ExitStatus>, String> {
    loop {
        let mut c = lock(child);
        match c.try_wait() {
            Ok(Some(status)) => return Ok(Some(status)),
            Ok(None) if Instant::now() >= deadline || over.load(Ordering::Relaxed) => {
                let _ = c.kill();
                let _ = c.wait();
                return Ok(None);
            }
            Ok(None) => {}
            Err(e) => {
                let _ = c.kill();
                let _ = c.wait();
                return Err(e.to_string());
            }
        }
        drop(c);
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Reads `pipe` to its end on a thread of its own, keeping its last `keep` bytes (where a
/// tool says why it failed).
fn drain_tail(pipe: Pipe, keep: usize) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        use std::io::Read;
        let mut tail = Vec::new();
        let Some(mut p) = pipe else { return tail };
        let mut buf = [0u8; 8192];
        while let Ok(n) = p.read(&mut buf) {
            if n == 0 {
                break;
            }
            tail.extend_from_slice(&buf[..n]);
            if tail.len() > 2 * keep {
                tail.drain(..tail.len() - keep);
            }
        }
        if tail.len() > keep {
            tail.drain(..tail.len() - keep);
        }
        tail
    })
}

type Pipe = Option<Box<dyn std::io::Read + Send>>;

/// Reads `pipe` on a thread of its own (so that a large output cannot block the child), up
/// to `max` bytes; past that it stops, sets `over` and keeps nothing.
fn drain(pipe: Pipe, max: u64, over: Arc<AtomicBool>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        use std::io::Read;
        let mut bytes = Vec::new();
        if let Some(p) = pipe {
            let _ = p.take(max.saturating_add(1)).read_to_end(&mut bytes);
        }
        if bytes.len() as u64 > max {
            over.store(true, Ordering::Relaxed);
            return Vec::new();
        }
        bytes
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The builds running now: what a signal handler kills and removes.
#[derive(Default)]
struct Running {
    next: u64,
    children: Vec<(u64, Arc<Mutex<Child>>, PathBuf)>,
    /// A signal is ending karplint.
    ending: bool,
}

fn running() -> &'static Registry {
    static RUNNING: OnceLock<Registry> = OnceLock::new();
    RUNNING.get_or_init(|| Registry(Mutex::new(Running::default())))
}

struct Registry(Mutex<Running>);

impl Registry {
    /// Registers a running build. Once a signal is ending karplint, the build is killed,
    /// its directory removed, and the thread waits for the end.
    fn register(&self, child: Arc<Mutex<Child>>, dir: &Path) -> u64 {
        let mut r = lock(&self.0);
        if r.ending {
            kill(&child, dir);
            wait_for_the_end(r);
        }
        r.next += 1;
        let id = r.next;
        r.children.push((id, child, dir.to_path_buf()));
        id
    }

    /// Forgets a build that has ended. When a signal killed it, the thread waits for the
    /// signal's end of karplint instead of going on as if the build had failed: the run
    /// would otherwise finish, and could exit 0, before the signal's thread ends it.
    fn unregister(&self, id: u64) {
        let mut r = lock(&self.0);
        r.children.retain(|(i, _, _)| *i != id);
        if r.ending {
            wait_for_the_end(r);
        }
    }

    /// Kills every running build and removes its directory; builds that start or end from
    /// now on wait for the end ([`Registry::register`], [`Registry::unregister`]).
    fn kill_all(&self) {
        let mut r = lock(&self.0);
        r.ending = true;
        for (_, child, dir) in &r.children {
            kill(child, dir);
        }
    }
}

/// Kills a build and removes its temporary directory.
fn kill(child: &Mutex<Child>, dir: &Path) {
    let mut c = lock(child);
    let _ = c.kill();
    let _ = c.wait();
    let _ = std::fs::remove_dir_all(dir);
}

/// Releases the registry and parks the calling thread for good: the signal's thread is
/// ending the process.
fn wait_for_the_end(r: std::sync::MutexGuard<'_, Running>) -> ! {
    drop(r);
    loop {
        std::thread::park();
    }
}

/// Once per process: SIGTERM and SIGINT kill the running builds, remove their temporary
/// directories, and then end karplint as the signal would have.
fn install_signal_handler() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        #[cfg(unix)]
        {
            use signal_hook::consts::{SIGINT, SIGTERM};
            let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGINT]) else {
                return;
            };
            std::thread::spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    running().kill_all();
                    let _ = signal_hook::low_level::emulate_default_handler(sig);
                    std::process::exit(128 + sig);
                }
            });
        }
    });
}
