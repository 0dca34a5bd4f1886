//! Who is on the other end of a Unix socket (`SO_PEERCRED`).

use std::os::fd::AsRawFd;

/// (pid, uid) of the peer, or `None` if the kernel will not say.
pub fn peer_cred(sock: &impl AsRawFd) -> Option<(u32, u32)> {
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt into a ucred of the right size.
    let r = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (r == 0).then_some((cred.pid as u32, cred.uid))
}
