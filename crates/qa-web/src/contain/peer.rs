//! Who is on the other end of a loopback TCP connection: the run's own
//! listeners (the containment proxy, the `target.serve` server) answer only
//! connections made by this user's processes — the run's browser — never
//! another local user's.
//!
//! On Linux the kernel lists every TCP socket of the network namespace with
//! its owner's uid in `/proc/net/tcp` and `/proc/net/tcp6`; the peer's
//! socket is the entry whose local address is the connection's peer address
//! and whose remote address is ours. Where that cannot be read the
//! connection is refused (fail-closed). Other systems have no such table;
//! there the listeners are loopback-only and unauthenticated (see
//! `docs/security.md`).

use std::net::SocketAddr;

/// Whether the process that opened the connection from `peer` to `local`
/// runs as this process's effective user.
pub(crate) fn same_user(local: SocketAddr, peer: SocketAddr) -> bool {
    from_user(local, peer, None)
}

/// Whether the process that opened the connection from `peer` to `local`
/// runs as `uid` (`None`: this process's effective user).
pub(crate) fn from_user(local: SocketAddr, peer: SocketAddr, uid: Option<u32>) -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: geteuid(2) cannot fail and touches no memory.
        #[allow(unsafe_code)]
        let me = uid.unwrap_or_else(|| unsafe { libc::geteuid() });
        owner_uid(local, peer) == Some(me)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (local, peer, uid);
        true
    }
}

/// The user of the process at the far end of our connection from `local`
/// to `peer` (a browser's DevTools port on this machine); `None` where the
/// system does not say.
pub(crate) fn far_end_uid(local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        owner_uid(local, peer)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (local, peer);
        None
    }
}

/// The uid owning the socket at `peer` connected to `local`.
#[cfg(target_os = "linux")]
fn owner_uid(local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    let table = match peer {
        SocketAddr::V4(_) => "/proc/net/tcp",
        SocketAddr::V6(_) => "/proc/net/tcp6",
    };
    let text = std::fs::read_to_string(table).ok()?;
    find_uid(&text, &hex_addr(peer), &hex_addr(local))
}

/// An address as the kernel's tables print it: the address's bytes as
/// 32-bit words in host order, then the port, all in upper-case hex.
#[cfg(target_os = "linux")]
fn hex_addr(a: SocketAddr) -> String {
    let words: Vec<u8> = match a {
        SocketAddr::V4(v) => v.ip().octets().to_vec(),
        SocketAddr::V6(v) => v.ip().octets().to_vec(),
    };
    let mut s = String::new();
    for w in words.chunks_exact(4) {
        let n = u32::from_ne_bytes([w[0], w[1], w[2], w[3]]);
        s.push_str(&format!("{n:08X}"));
    }
    format!("{s}:{:04X}", a.port())
}

/// The uid of the table row whose local address is `local` and remote
/// address `remote`.
#[cfg(target_os = "linux")]
fn find_uid(table: &str, local: &str, remote: &str) -> Option<u32> {
    table.lines().skip(1).find_map(|row| {
        let f: Vec<&str> = row.split_whitespace().collect();
        // sl local rem st queues timer retrnsmt uid …
        (f.len() > 7 && f[1].eq_ignore_ascii_case(local) && f[2].eq_ignore_ascii_case(remote))
            .then(|| f[7].parse().ok())
            .flatten()
    })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn reads_the_owner_of_a_row() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:A2C4 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0 20 4 30 10 -1\n";
        let peer: SocketAddr = "127.0.0.1:41668".parse().unwrap();
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        if cfg!(target_endian = "little") {
            assert_eq!(hex_addr(peer), "0100007F:A2C4");
        }
        assert_eq!(
            find_uid(table, &hex_addr(peer), &hex_addr(local)),
            Some(1000)
        );
        assert_eq!(find_uid(table, &hex_addr(local), &hex_addr(peer)), None);
    }

    #[test]
    fn a_connection_of_this_user_is_its_own() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, peer) = l.accept().unwrap();
        assert!(same_user(s.local_addr().unwrap(), peer));
        drop(c);
    }
}
