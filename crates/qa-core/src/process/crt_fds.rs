//! The C runtime's inherited descriptors on Windows.
//!
//! A Windows program built with the Microsoft C runtime finds its file
//! descriptors beyond 0, 1 and 2 in the block its parent put in
//! `STARTUPINFO.lpReserved2` (size in `cbReserved2`): a little-endian
//! 32-bit count `n`, then `n` flag bytes (one per descriptor, from 0), then
//! `n` handles of pointer size, with no padding anywhere. The runtime
//! opens descriptor `i` on handle `i` when the flags carry `FOPEN` and the
//! handle is neither `INVALID_HANDLE_VALUE` nor `-2`; a descriptor 0–2 it
//! does not open this way comes from the standard handles instead.
//!
//! This is how Chromium's `--remote-debugging-pipe` receives descriptors 3
//! and 4 on Windows. [`block`] writes the bytes; the spawn that uses them
//! is Windows-only (`ProcessOwner::spawn_with_fds`).

/// The descriptor is open.
pub const FOPEN: u8 = 0x01;
/// The descriptor is a pipe.
pub const FPIPE: u8 = 0x08;
/// What an unopened descriptor's handle slot holds (`INVALID_HANDLE_VALUE`).
pub const NO_HANDLE: usize = usize::MAX;

/// The size in bytes of a block for `count` descriptors.
pub fn block_len(count: usize) -> usize {
    4 + count + count * std::mem::size_of::<usize>()
}

/// The `lpReserved2` block for descriptors 0, 1, 2, … in order: `Some`
/// is a pipe handle (its raw value) opened as that descriptor, `None` a
/// descriptor left closed (the runtime falls back to the standard handle
/// for 0–2). `None` when the block would not fit `cbReserved2` (16 bits).
pub fn block(fds: &[Option<usize>]) -> Option<Vec<u8>> {
    let len = block_len(fds.len());
    if len > usize::from(u16::MAX) {
        return None;
    }
    let mut b = Vec::with_capacity(len);
    b.extend_from_slice(&u32::try_from(fds.len()).ok()?.to_le_bytes());
    b.extend(fds.iter().map(|f| match f {
        Some(_) => FOPEN | FPIPE,
        None => 0,
    }));
    for f in fds {
        b.extend_from_slice(&f.unwrap_or(NO_HANDLE).to_le_bytes());
    }
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads a block back the way the C runtime does at start-up: the
    /// descriptors it opens and their handles.
    fn opened(b: &[u8]) -> Vec<(usize, usize)> {
        let word = std::mem::size_of::<usize>();
        let n = u32::from_le_bytes(b[..4].try_into().unwrap()) as usize;
        let n = n.min((b.len() - 4) / (1 + word));
        let flags = &b[4..4 + n];
        let handles = &b[4 + n..];
        (0..n)
            .filter_map(|i| {
                let h = usize::from_le_bytes(handles[i * word..(i + 1) * word].try_into().unwrap());
                let open = flags[i] & FOPEN != 0 && h != NO_HANDLE && h != usize::MAX - 1;
                open.then_some((i, h))
            })
            .collect()
    }

    #[test]
    fn the_devtools_pipes_become_descriptors_three_and_four() {
        let b = block(&[None, None, Some(0x1c), Some(0x2a), Some(0x30)]).unwrap();
        assert_eq!(b.len(), block_len(5));
        assert_eq!(&b[..4], &[5, 0, 0, 0], "the count, little-endian");
        assert_eq!(
            &b[4..9],
            &[0, 0, FOPEN | FPIPE, FOPEN | FPIPE, FOPEN | FPIPE]
        );
        assert_eq!(opened(&b), [(2, 0x1c), (3, 0x2a), (4, 0x30)]);
    }

    #[test]
    fn closed_descriptors_carry_the_invalid_handle_and_no_flags() {
        let b = block(&[None, Some(7)]).unwrap();
        let word = std::mem::size_of::<usize>();
        assert_eq!(b[4], 0);
        assert_eq!(&b[6..6 + word], &NO_HANDLE.to_le_bytes());
        assert_eq!(opened(&b), [(1, 7)]);
    }

    #[test]
    fn an_empty_block_is_a_zero_count() {
        assert_eq!(block(&[]).unwrap(), vec![0, 0, 0, 0]);
    }

    #[test]
    fn a_block_too_big_for_cb_reserved2_is_refused() {
        let word = std::mem::size_of::<usize>();
        let most = (usize::from(u16::MAX) - 4) / (1 + word);
        assert!(block(&vec![None; most]).is_some());
        assert!(block(&vec![None; most + 1]).is_none());
    }
}
