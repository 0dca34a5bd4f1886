//! Tests of server.rs.

use super::*;

fn client() -> (Client, UnixStream) {
    let (a, b) = UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    (Client::new(a, Peer { pid: 1, uid: 0 }), b)
}

#[test]
fn splits_lines_across_reads_and_drops_oversized_ones() {
    let (mut c, mut other) = client();
    other.write_all(b"{\"cmd\":").unwrap();
    assert!(c.read_lines().is_empty());
    other.write_all(b"\"home\"}\nsecond\n").unwrap();
    let l = c.read_lines();
    assert_eq!(l, vec![Ok("{\"cmd\":\"home\"}".to_string()), Ok("second".to_string())]);
    other.write_all(&vec![b'x'; MAX_LINE + 10]).unwrap();
    let l = c.read_lines();
    assert_eq!(l.len(), 1);
    assert!(l[0].is_err());
    other.write_all(b"rest of the long line\nok\n").unwrap();
    assert_eq!(c.read_lines(), vec![Ok("ok".to_string())], "the tail of the long line is skipped");
    drop(other);
    c.read_lines();
    assert!(c.closed);
}

#[test]
fn a_fast_sender_is_read_a_budget_at_a_time() {
    let (mut c, mut other) = client();
    other.write_all(&b"x\n".repeat(2000)).unwrap();
    let first = c.read_lines();
    assert_eq!(first.len(), LINES_PER_WAKE, "no more requests than the budget in one wake-up");
    assert!(c.inbuf.len() <= 4096, "one read's worth waits in ours, the rest in the kernel's buffer");
    assert!(c.has_pending(), "the loop must come back for what waits");
    let mut total = first.len();
    while total < 2000 {
        let n = c.read_lines().len();
        assert!(n > 0 && n <= LINES_PER_WAKE);
        total += n;
    }
    assert_eq!(total, 2000, "nothing lost, only spread over wake-ups");
}

#[test]
fn bad_requests_in_a_row_drop_the_client_and_answers_are_bounded() {
    let (mut c, _other) = client();
    for _ in 0..MAX_BAD_LINES - 1 {
        c.judged(false);
    }
    c.judged(true);
    assert!(!c.closed, "a good request resets the count");
    for _ in 0..MAX_BAD_LINES {
        c.judged(false);
    }
    assert!(c.closed);
    let (mut c, _other) = client();
    // The peer never reads: the socket's buffer fills, then ours up to its bound.
    for _ in 0..100_000 {
        c.send(&[b'y'; 100]);
        if c.closed {
            break;
        }
    }
    assert!(c.closed && c.out.capacity() < MAX_PENDING_OUT, "dropped once its unread answers pass the bound");
}

#[test]
fn the_socket_path_replaces_only_a_stale_socket_never_a_file() {
    let dir = std::env::temp_dir().join(format!("memorch-claim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("notes.txt");
    std::fs::write(&file, "mine").unwrap();
    let e = Server::claim(&file).unwrap_err();
    assert!(e.to_string().contains("not a socket"), "{e}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine", "the file is left as it was");
    let sock = dir.join("ctl.sock");
    let live = Server::bind(&sock).unwrap();
    assert_eq!(Server::claim(&sock).unwrap_err().kind(), ErrorKind::AddrInUse);
    drop(live);
    // A socket nobody listens on is stale: replaced.
    drop(UnixListener::bind(&sock).unwrap());
    Server::claim(&sock).unwrap();
    assert!(!sock.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn uids_are_limited_and_root_keeps_its_places() {
    assert!(admit(1000, std::iter::repeat_n(1000, MAX_PER_UID - 1)).is_ok());
    assert!(admit(1000, std::iter::repeat_n(1000, MAX_PER_UID)).unwrap_err().contains("uid 1000"));
    assert!(admit(1001, std::iter::repeat_n(1000, MAX_PER_UID)).is_ok(), "another uid is not affected");
    let crowd = || (0..MAX_CLIENTS - ROOT_RESERVED).map(|i| 2000 + i as u32);
    assert!(admit(3000, crowd()).unwrap_err().contains("root's"));
    assert!(admit(0, crowd()).is_ok(), "root gets in");
    assert!(admit(0, std::iter::repeat_n(0, MAX_CLIENTS)).is_err());
}
