//! The watch on an owned app's DevTools port (`"devtools": "port"`).
//!
//! A loopback TCP port answers every local process, whatever its user:
//! nothing in the app can restrict it. The run therefore treats any
//! connection to the port but its own as an intrusion: a thread reads the
//! kernel's TCP tables (`/proc/net/tcp`, `/proc/net/tcp6`) every
//! [`PERIOD`], and the first row to the port from a client port the run did
//! not use trips the guard. The caller then hangs up the app (it ends, and
//! with it every connection) and fails the run. A connection that closed
//! before a read is still seen: the kernel keeps it as `TIME_WAIT` for a
//! minute. What the guard cannot undo is what that client did in the
//! moments before it was seen, which is why the pipe is the default and
//! the port the fallback (docs/security.md).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the tables are read.
pub(crate) const PERIOD: Duration = Duration::from_millis(20);

/// A running watch; stopped when dropped.
pub(crate) struct PortGuard {
    stop: Arc<AtomicBool>,
    tripped: Arc<Mutex<Option<String>>>,
}

impl PortGuard {
    /// Watches 127.0.0.1:`port`, where the run's own connections came from
    /// `ours` (client ports). `on_trip` runs once, on the watch's thread,
    /// with what was seen.
    pub(crate) fn start(
        port: u16,
        ours: Vec<u16>,
        on_trip: impl FnOnce(&str) + Send + 'static,
    ) -> std::io::Result<PortGuard> {
        let stop = Arc::new(AtomicBool::new(false));
        let tripped = Arc::new(Mutex::new(None));
        let (s, t) = (stop.clone(), tripped.clone());
        let ours: BTreeSet<u16> = ours.into_iter().collect();
        std::thread::Builder::new()
            .name("qa-web-port-guard".into())
            .spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    if let Some(seen) = foreign(port, &ours) {
                        let what = format!(
                            "a connection ui-qa did not make reached the app's DevTools port 127.0.0.1:{port} (from local port {seen}); the app was ended"
                        );
                        *t.lock().expect("guard lock") = Some(what.clone());
                        on_trip(&what);
                        return;
                    }
                    std::thread::sleep(PERIOD);
                }
            })?;
        Ok(PortGuard { stop, tripped })
    }

    /// What tripped the guard, if it tripped.
    pub(crate) fn tripped(&self) -> Option<String> {
        self.tripped.lock().expect("guard lock").clone()
    }

    /// A handle that reads whether the guard tripped, for as long as it
    /// is kept (after the guard itself is gone too).
    pub(crate) fn watch(&self) -> Tripped {
        Tripped(self.tripped.clone())
    }
}

/// Whether a [`PortGuard`] tripped, read from elsewhere.
pub(crate) struct Tripped(Arc<Mutex<Option<String>>>);

impl Tripped {
    /// What tripped it, if it did.
    pub(crate) fn what(&self) -> Option<String> {
        self.0.lock().expect("guard lock").clone()
    }
}

impl Drop for PortGuard {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The client port of a connection to 127.0.0.1:`port` that is not one of
/// `ours`, if the tables show one.
fn foreign(port: u16, ours: &BTreeSet<u16>) -> Option<u16> {
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().find_map(|t| {
        let text = std::fs::read_to_string(t).ok()?;
        let seen = clients(&text, port).find(|c| !ours.contains(c));
        seen
    })
}

/// `LISTEN`: the app's own socket.
const LISTEN: &str = "0A";

/// The client ports of every row of `table` (a kernel TCP table) that is a
/// connection to loopback `port`, from either end, in any state but
/// `LISTEN`.
fn clients(table: &str, port: u16) -> impl Iterator<Item = u16> + '_ {
    table.lines().skip(1).filter_map(move |row| {
        let f: Vec<&str> = row.split_whitespace().collect();
        // sl local rem st …
        if f.len() < 4 || f[3].eq_ignore_ascii_case(LISTEN) {
            return None;
        }
        let (la, lp) = split(f[1])?;
        let (ra, rp) = split(f[2])?;
        if lp == port && loopback(la) {
            Some(rp)
        } else if rp == port && loopback(ra) {
            Some(lp)
        } else {
            None
        }
    })
}

/// `ADDR:PORT` in the tables' hex.
fn split(s: &str) -> Option<(&str, u16)> {
    let (a, p) = s.split_once(':')?;
    Some((a, u16::from_str_radix(p, 16).ok()?))
}

/// Whether a table address is loopback: 127.0.0.0/8 (the first byte is
/// the low one of the host-order word), `::1` or `::ffff:127.x.y.z`.
fn loopback(hex: &str) -> bool {
    let word = |i: usize| {
        hex.get(i * 8..i * 8 + 8)
            .and_then(|w| u32::from_str_radix(w, 16).ok())
    };
    let first_byte = |w: u32| w.to_ne_bytes()[0];
    match hex.len() {
        8 => word(0).is_some_and(|w| first_byte(w) == 127),
        32 => match (word(0), word(1), word(2), word(3)) {
            (Some(0), Some(0), Some(0), Some(w)) => w.to_ne_bytes() == [0, 0, 0, 1],
            (Some(0), Some(0), Some(m), Some(w)) => {
                m.to_ne_bytes() == [0, 0, 0xff, 0xff] && first_byte(w) == 127
            }
            _ => false,
        },
        _ => false,
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_connection_from_a_port_of_the_run_is_its_own_and_any_other_is_not() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let ours = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let mine: BTreeSet<u16> = [ours.local_addr().unwrap().port()].into();
        assert_eq!(
            foreign(port, &mine),
            None,
            "the listener and our connection"
        );
        let other = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let theirs = other.local_addr().unwrap().port();
        assert_eq!(foreign(port, &mine), Some(theirs));
        // Closed (TIME_WAIT on the side that closed first): still seen.
        drop(other);
        assert_eq!(foreign(port, &mine), Some(theirs));
    }

    #[test]
    fn the_guard_trips_once_on_a_foreign_connection() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let (tx, rx) = std::sync::mpsc::channel();
        let g = PortGuard::start(port, Vec::new(), move |w| {
            tx.send(w.to_string()).unwrap();
        })
        .unwrap();
        let _c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let what = rx.recv_timeout(Duration::from_secs(60)).unwrap();
        assert!(what.contains(&port.to_string()), "{what}");
        assert_eq!(g.tripped().as_deref(), Some(what.as_str()));
    }

    #[test]
    fn loopback_addresses_in_the_tables() {
        // 127.0.0.1 as the kernel prints it on this machine.
        let v4 = format!("{:08X}", u32::from_ne_bytes([127, 0, 0, 1]));
        assert!(loopback(&v4));
        assert!(!loopback(&format!(
            "{:08X}",
            u32::from_ne_bytes([10, 0, 0, 1])
        )));
        let w = |b: [u8; 4]| format!("{:08X}", u32::from_ne_bytes(b));
        assert!(loopback(&format!(
            "{}{}{}{}",
            w([0; 4]),
            w([0; 4]),
            w([0; 4]),
            w([0, 0, 0, 1])
        )));
        assert!(loopback(&format!(
            "{}{}{}{}",
            w([0; 4]),
            w([0; 4]),
            w([0, 0, 0xff, 0xff]),
            w([127, 0, 0, 1])
        )));
        assert!(!loopback("zz"));
    }
}
