//! Tests of sandbox.rs.

#[test]
fn stale_names_carry_their_creator() {
    assert_eq!(super::owner_of("memorch-bench-memorch-26322-1"), Some(26322));
    assert_eq!(super::owner_of("memorch-status-77-0"), Some(77));
    assert_eq!(super::owner_of("phone"), None);
    assert_eq!(super::owner_of("other-12-3"), None, "only memorch's own names");
    assert_eq!(super::owner_of("memorch-x-y-z"), None);
}
