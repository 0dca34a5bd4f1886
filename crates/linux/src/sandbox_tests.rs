//! Tests of sandbox.rs.

#[test]
fn stale_names_carry_their_creator() {
    let pid_ns = |name: &str| super::owner_of(name).map(|o| (o.pid, o.pid_ns));
    assert_eq!(pid_ns("memorch-bench-memorch-26322-1"), Some((26322, Some(0xEFFF_FFFC))));
    assert_eq!(pid_ns("memorch-status-77_4026532300-0"), Some((77, Some(4026532300))), "a namespaced creator");
    assert_eq!(super::owner_of("phone"), None);
    assert_eq!(super::owner_of("other-12-3"), None, "only memorch's own names");
    assert_eq!(super::owner_of("memorch-x-y-z"), None);
}
