//! Tests of cgroup.rs.

use super::*;

#[test]
fn dir_of_respects_mount_root() {
    let m = Mount {
        dir: "/sys/fs/cgroup/memory".into(),
        cgroup_root: "/".into(),
        v1_controllers: Some(vec!["memory".into()]),
    };
    assert_eq!(m.dir_of("/a/b").unwrap(), PathBuf::from("/sys/fs/cgroup/memory/a/b"));
    assert_eq!(m.dir_of("/").unwrap(), PathBuf::from("/sys/fs/cgroup/memory"));
    let inner = Mount { cgroup_root: "/ns".into(), ..m };
    assert_eq!(inner.dir_of("/ns/x").unwrap(), PathBuf::from("/sys/fs/cgroup/memory/x"));
    assert!(inner.dir_of("/nsx").is_none());
    assert!(inner.dir_of("/other").is_none());
}

#[test]
fn path_of_inverts_dir_of() {
    let m = Mount { dir: "/sys/fs/cgroup/unified".into(), cgroup_root: "/".into(), v1_controllers: None };
    for path in ["/", "/a", "/a/b"] {
        assert_eq!(m.path_of(&m.dir_of(path).unwrap()).as_deref(), Some(path));
    }
    let inner = Mount { cgroup_root: "/ns".into(), ..m.clone() };
    assert_eq!(inner.path_of(Path::new("/sys/fs/cgroup/unified/x")).as_deref(), Some("/ns/x"));
    assert_eq!(inner.path_of(Path::new("/sys/fs/cgroup/unified")).as_deref(), Some("/ns"));
    assert!(m.path_of(Path::new("/sys/fs/cgroup/memory/a")).is_none());
}

#[test]
fn paths_are_validated() {
    assert!(validate_path("/a/b").is_ok());
    assert!(validate_path("/").is_ok());
    assert!(validate_path("a/b").is_err());
    assert!(validate_path("/a/../b").is_err());
    assert!(validate_path("/a//b").is_err());
    assert!(validate_path("/a/").is_err());
}
