//! The bridge: the command the owned terminal window runs instead of the
//! program. It connects to the session's socket (in a private directory,
//! named by [`SOCKET_ENV`]), proves itself with the one-time token
//! ([`TOKEN_ENV`]) and the window's size, puts the window's terminal in
//! raw mode, and then copies: the program's output from the socket to the
//! window, and whatever the window sends (its answers to the program's
//! queries, keys typed into it) back to the socket. It ends when the
//! socket closes.
//!
//! Both values reach it through the environment the window inherits
//! (readable only by the same user), never through a command line. The
//! binary that runs it calls [`main_if_requested`] first thing in `main`;
//! `ui-qa` does.

/// The environment variable naming the session's socket.
pub const SOCKET_ENV: &str = "UI_QA_BRIDGE_SOCKET";
/// The environment variable holding the session's one-time token.
pub const TOKEN_ENV: &str = "UI_QA_BRIDGE_TOKEN";

/// The handshake line the bridge sends: `TOKEN COLS ROWS`.
pub fn hello(token: &str, cols: u16, rows: u16) -> String {
    format!("{token} {cols} {rows}\n")
}

/// The token and size of a handshake line (without its newline); `None`
/// when it is not one.
pub fn parse_hello(line: &str) -> Option<(&str, u16, u16)> {
    let mut it = line.split(' ');
    let (token, cols, rows) = (it.next()?, it.next()?, it.next()?);
    if it.next().is_some() || token.is_empty() {
        return None;
    }
    Some((token, cols.parse().ok()?, rows.parse().ok()?))
}

/// Whether `given` is `expected`, in time that does not depend on where
/// they differ.
pub fn token_matches(given: &str, expected: &str) -> bool {
    let (g, e) = (given.as_bytes(), expected.as_bytes());
    g.len() == e.len() && g.iter().zip(e).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// When this process was started as a bridge (both variables are set):
/// runs it and returns the exit code to end with. Otherwise `None`, and
/// nothing happened.
pub fn main_if_requested() -> Option<i32> {
    let socket = std::env::var_os(SOCKET_ENV)?;
    let token = std::env::var(TOKEN_ENV).ok()?;
    Some(run(std::path::Path::new(&socket), &token))
}

#[cfg(unix)]
fn run(socket: &std::path::Path, token: &str) -> i32 {
    match unix::run(socket, token) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("ui-qa bridge: {e}");
            1
        }
    }
}

#[cfg(not(unix))]
fn run(_socket: &std::path::Path, _token: &str) -> i32 {
    eprintln!("ui-qa bridge: the native-terminal bridge runs on Unix only");
    1
}

#[cfg(unix)]
mod unix {
    use std::io::{Read, Write};
    use std::os::fd::AsFd;
    use std::os::unix::net::UnixStream;

    /// The size of the terminal on standard input.
    #[allow(unsafe_code)]
    fn size() -> (u16, u16) {
        // SAFETY: TIOCGWINSZ fills a winsize for a valid descriptor; 0 is
        // ours for the process's life.
        unsafe {
            let mut ws: libc::winsize = std::mem::zeroed();
            if libc::ioctl(0, libc::TIOCGWINSZ, &mut ws) == 0 {
                (ws.ws_col, ws.ws_row)
            } else {
                (0, 0)
            }
        }
    }

    /// Raw mode on standard input's terminal: bytes pass unchanged both
    /// ways (no echo, no line editing, no `\n` → `\r\n`).
    #[allow(unsafe_code)]
    fn raw() -> std::io::Result<()> {
        // SAFETY: tcgetattr/tcsetattr on descriptor 0 with a termios we own.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::cfmakeraw(&mut t);
            if libc::tcsetattr(0, libc::TCSANOW, &t) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }

    pub(super) fn run(socket: &std::path::Path, token: &str) -> std::io::Result<()> {
        let mut s = UnixStream::connect(socket)?;
        raw()?;
        let (cols, rows) = size();
        s.write_all(super::hello(token, cols, rows).as_bytes())?;
        let mut back = s.try_clone()?;
        // The window's answers and keys go back to the program.
        std::thread::spawn(move || {
            let mut input = std::io::stdin().lock();
            let _ = std::io::copy(&mut input, &mut back);
        });
        // The program's output, unbuffered, to the window.
        let mut out = std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned()?);
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match s.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(n) => out.write_all(&buf[..n])?,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handshake_is_a_token_and_a_size() {
        let line = hello("abc123", 80, 24);
        assert_eq!(parse_hello(line.trim_end()), Some(("abc123", 80, 24)));
        assert_eq!(parse_hello("abc123 80"), None);
        assert_eq!(parse_hello("abc123 80 24 x"), None);
        assert_eq!(parse_hello(" 80 24"), None);
        assert_eq!(parse_hello("abc 80 -1"), None);
    }

    #[test]
    fn only_the_exact_token_matches() {
        assert!(token_matches("0f9e", "0f9e"));
        assert!(!token_matches("0f9f", "0f9e"));
        assert!(!token_matches("0f9", "0f9e"));
        assert!(!token_matches("", "0f9e"));
    }
}
