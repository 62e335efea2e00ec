#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape serve` over every kind of stdin and stdout a user may give it:
//! pipe, file, terminal and socket, in every combination. Each serves until
//! its input ends, answers what arrived late (after the first read found
//! nothing), and exits cleanly. The commands survive a reader that leaves
//! before their output, and a stderr nobody reads.

#![cfg(unix)]

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
const PONG: &str = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
/// How long the client waits before writing: the server's first read finds nothing.
const LATE: Duration = Duration::from_millis(300);
/// The longest a case may take.
const LIMIT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pipe,
    File,
    Terminal,
    Socket,
}

const KINDS: [Kind; 4] = [Kind::Pipe, Kind::File, Kind::Terminal, Kind::Socket];

/// A pseudo-terminal: the test holds the controller, the server gets the other side.
struct Pty {
    controller: File,
    device: std::path::PathBuf,
}

impl Pty {
    fn open() -> Pty {
        use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
        let controller =
            openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("a pseudo-terminal");
        grantpt(&controller).expect("grantpt");
        unlockpt(&controller).expect("unlockpt");
        let name = ptsname(&controller, Vec::new()).expect("ptsname");
        let device = std::path::PathBuf::from(name.to_string_lossy().into_owned());
        Pty {
            controller: File::from(controller),
            device,
        }
    }

    /// The terminal side, without echo (so that what the test reads is the server's output only).
    fn terminal(&self) -> File {
        let terminal = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.device)
            .expect("the terminal side");
        let mut modes = rustix::termios::tcgetattr(&terminal).expect("tcgetattr");
        modes.local_modes.remove(rustix::termios::LocalModes::ECHO);
        rustix::termios::tcsetattr(&terminal, rustix::termios::OptionalActions::Now, &modes)
            .expect("tcsetattr");
        terminal
    }
}

/// The test's end of the server's input.
enum Feed {
    Pipe,
    File,
    Terminal(File),
    Socket(UnixStream),
}

/// The test's end of the server's output.
enum Drain {
    Pipe,
    File(tempfile::NamedTempFile),
    Terminal(File),
    Socket(UnixStream),
}

fn run_case(input: Kind, output: Kind) -> Result<String, String> {
    let pty = (input == Kind::Terminal || output == Kind::Terminal).then(Pty::open);
    let terminal = pty.as_ref().map(Pty::terminal);
    let root = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolshape"));
    command
        .args(["serve", "--root"])
        .arg(root.path())
        .stderr(Stdio::piped());

    let feed = match input {
        Kind::Pipe => {
            command.stdin(Stdio::piped());
            Feed::Pipe
        }
        Kind::File => {
            let mut file = tempfile::tempfile().map_err(|e| e.to_string())?;
            writeln!(file, "{PING}").map_err(|e| e.to_string())?;
            use std::io::Seek;
            file.rewind().map_err(|e| e.to_string())?;
            command.stdin(file);
            Feed::File
        }
        Kind::Terminal => {
            let side = terminal.as_ref().ok_or("no terminal")?;
            command.stdin(side.try_clone().map_err(|e| e.to_string())?);
            let controller = pty.as_ref().ok_or("no pty")?.controller.try_clone();
            Feed::Terminal(controller.map_err(|e| e.to_string())?)
        }
        Kind::Socket => {
            let (ours, theirs) = UnixStream::pair().map_err(|e| e.to_string())?;
            command.stdin(OwnedFd::from(theirs));
            Feed::Socket(ours)
        }
    };
    let drain = match output {
        Kind::Pipe => {
            command.stdout(Stdio::piped());
            Drain::Pipe
        }
        Kind::File => {
            let file = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
            command.stdout(file.reopen().map_err(|e| e.to_string())?);
            Drain::File(file)
        }
        Kind::Terminal => {
            let side = terminal.as_ref().ok_or("no terminal")?;
            command.stdout(side.try_clone().map_err(|e| e.to_string())?);
            let controller = pty.as_ref().ok_or("no pty")?.controller.try_clone();
            Drain::Terminal(controller.map_err(|e| e.to_string())?)
        }
        Kind::Socket => {
            let (ours, theirs) = UnixStream::pair().map_err(|e| e.to_string())?;
            command.stdout(OwnedFd::from(theirs));
            Drain::Socket(ours)
        }
    };
    let mut child = command.spawn().map_err(|e| e.to_string())?;
    // The server alone holds its ends now.
    drop(command);
    drop(terminal);

    // Read the output on a thread, so that a full pipe never blocks the server.
    let (read_tx, read_rx) = mpsc::channel::<String>();
    let mut reader: Option<Box<dyn Read + Send>> = match &drain {
        Drain::Pipe => child
            .stdout
            .take()
            .map(|out| Box::new(out) as Box<dyn Read + Send>),
        Drain::File(_) => None,
        Drain::Terminal(controller) => {
            Some(Box::new(controller.try_clone().map_err(|e| e.to_string())?))
        }
        Drain::Socket(stream) => Some(Box::new(stream.try_clone().map_err(|e| e.to_string())?)),
    };
    if let Some(mut source) = reader.take() {
        thread::spawn(move || {
            let mut seen = Vec::new();
            let mut chunk = [0u8; 4096];
            // A terminal's controller fails (EIO) once the server is gone: that ends it too.
            while let Ok(n) = source.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&chunk[..n]);
                if String::from_utf8_lossy(&seen).contains(PONG) {
                    break;
                }
            }
            let _ = read_tx.send(String::from_utf8_lossy(&seen).into_owned());
        });
    }

    thread::sleep(LATE);
    // Kept open until the server has answered and gone.
    let mut held_terminal = None;
    match feed {
        Feed::Pipe => {
            let mut stdin = child.stdin.take().ok_or("no stdin")?;
            writeln!(stdin, "{PING}").map_err(|e| e.to_string())?;
            thread::sleep(LATE);
            drop(stdin);
        }
        Feed::File => {}
        Feed::Terminal(mut controller) => {
            controller
                .write_all(format!("{PING}\n").as_bytes())
                .map_err(|e| e.to_string())?;
            thread::sleep(LATE);
            // End of input at a terminal: Ctrl-D at the start of a line.
            controller.write_all(&[0x04]).map_err(|e| e.to_string())?;
            held_terminal = Some(controller);
        }
        Feed::Socket(stream) => {
            (&stream)
                .write_all(format!("{PING}\n").as_bytes())
                .map_err(|e| e.to_string())?;
            thread::sleep(LATE);
            stream
                .shutdown(std::net::Shutdown::Write)
                .map_err(|e| e.to_string())?;
        }
    }

    let status = wait_with_limit(&mut child)?;
    drop(held_terminal);
    let mut stderr = String::new();
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_string(&mut stderr);
    }
    let written = match drain {
        Drain::File(file) => std::fs::read_to_string(file.path()).map_err(|e| e.to_string())?,
        _ => read_rx
            .recv_timeout(LIMIT)
            .map_err(|_| "the output never ended".to_owned())?,
    };
    if !status.success() {
        return Err(format!("exit status {status}; stderr: {stderr}"));
    }
    if !written.contains(PONG) {
        return Err(format!(
            "no answer in the output {written:?}; stderr: {stderr}"
        ));
    }
    Ok(stderr)
}

fn wait_with_limit(child: &mut std::process::Child) -> Result<std::process::ExitStatus, String> {
    let deadline = std::time::Instant::now() + LIMIT;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            return Err("the server did not exit at the end of its input".into());
        }
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn serves_every_combination_of_input_and_output_until_the_input_ends() {
    let mut failures = Vec::new();
    for input in KINDS {
        for output in KINDS {
            if let Err(why) = run_case(input, output) {
                failures.push(format!("stdin {input:?}, stdout {output:?}: {why}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_newcomer_at_a_terminal_is_told_what_the_server_waits_for() {
    let stderr = run_case(Kind::Terminal, Kind::Pipe).expect("served");
    assert!(
        stderr.contains("toolshape tools -- toolshape serve"),
        "no hint on stderr: {stderr}"
    );
    let stderr = run_case(Kind::Pipe, Kind::Pipe).expect("served");
    assert!(
        !stderr.contains("toolshape tools -- toolshape serve"),
        "the hint is for terminals only: {stderr}"
    );
}

/// The client commands write their output to a reader that may leave early
/// (`toolshape tools -- ... | head -1`): a closed stdout ends the output,
/// never in a panic, and the command still closes its server and exits 0.
#[test]
fn a_client_command_whose_reader_left_exits_cleanly() {
    let root = tempfile::tempdir().expect("a folder");
    let bin = env!("CARGO_BIN_EXE_toolshape");
    for command in [
        &["tools"][..],
        &["call", "list_directory", "--args", r#"{"path":"."}"#],
    ] {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let output = Command::new(bin)
            .args(command)
            .arg("--")
            .arg(bin)
            .arg("serve")
            .arg("--root")
            .arg(root.path())
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("the command runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{command:?}: {stderr}");
        assert!(
            output.status.success(),
            "{command:?}: {:?} {stderr}",
            output.status
        );
    }
}

/// A command whose stderr reader left (a host that stopped reading the
/// server's log) still ends with its own exit code, not a panic's.
#[test]
fn a_command_whose_stderr_reader_left_keeps_its_exit_code() {
    let bin = env!("CARGO_BIN_EXE_toolshape");
    let run = |stderr: Stdio| {
        Command::new(bin)
            .args(["tools", "--", "/nonexistent/mcp-server"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .status()
            .expect("the command runs")
    };
    let heard = run(Stdio::piped());
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let unheard = run(Stdio::from(writer));
    assert!(!heard.success(), "a missing server is a failure: {heard:?}");
    assert_eq!(
        unheard.code(),
        heard.code(),
        "{unheard:?} against {heard:?}"
    );
}

/// The soft limit on open descriptors is raised to the hard one: a usual
/// 1,024 (here 256) is below what 64 walks and many connections hold.
#[cfg(target_os = "linux")]
#[test]
fn the_open_file_limit_is_raised() {
    let script = r#"ulimit -Sn 256 && exec "$0" serve --no-watch --root /tmp"#;
    let mut serve = Command::new("sh")
        .args(["-c", script, env!("CARGO_BIN_EXE_toolshape")])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let limits = |pid: u32| -> Vec<String> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap_or_default();
        let line = text
            .lines()
            .find(|line| line.starts_with("Max open files"))
            .unwrap_or_default()
            .to_owned();
        line.split_whitespace().map(str::to_owned).collect()
    };
    // Once it runs (the limit is raised before anything is served).
    let mut fields = Vec::new();
    for _ in 0..100 {
        fields = limits(serve.id());
        if fields.get(3).is_some_and(|soft| soft != "256") {
            break;
        }
        thread::sleep(Duration::from_millis(50));
    }
    drop(serve.stdin.take());
    let _ = serve.wait();
    // "Max open files <soft> <hard> files"
    assert_eq!(fields.get(3), fields.get(4), "{fields:?}");
}
