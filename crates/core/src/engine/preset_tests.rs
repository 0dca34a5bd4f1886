//! Tests of preset.rs.

use super::*;
use crate::engine::model::MIB;

#[test]
fn every_name_has_a_preset() {
    for n in NAMES.iter().chain(BASELINES.iter()) {
        assert_eq!(Preset::by_name(n).unwrap().name, *n);
    }
    assert!(Preset::by_name("nope").is_none());
}

#[test]
fn every_file_is_a_listed_preset_and_only_the_memorch_preset_has_bands() {
    assert_eq!(FILES.len(), NAMES.len() + BASELINES.len());
    for p in Preset::all() {
        assert_eq!(matches!(p.detection, Detection::Bands(_)), p.name == "memorch", "{}", p.name);
    }
}

#[test]
fn a_file_with_an_unknown_key_or_a_bad_value_is_refused_with_its_line() {
    let text = Preset::file_text("memorch").unwrap();
    let typo = text.replace("max_files = 8", "max_file = 8");
    let e = Preset::from_toml("mine", &typo).unwrap_err();
    assert!(e.contains("max_file") && e.contains("line"), "{e}");
    let bad = text.replace("max_files = 8", "max_files = \"eight\"");
    let e = Preset::from_toml("mine", &bad).unwrap_err();
    assert!(e.contains("max_files") && e.contains("line"), "{e}");
    let range = text.replace("work_nice = 0", "work_nice = 40");
    assert!(Preset::from_toml("mine", &range).unwrap_err().contains("work_nice"));
    assert_eq!(Preset::from_toml("mine", text).unwrap().name, "mine");
}

#[test]
fn the_cost_model_chooses_the_victims_and_a_file_that_says_otherwise_is_refused() {
    let text = Preset::file_text("memorch").unwrap();
    assert_eq!(Preset::from_toml("mine", text).unwrap().kill, KillPolicy::by_cost());
    let told = format!("{text}\n[kill]\norder = \"class_then_size\"\n");
    let e = Preset::from_toml("mine", &told).unwrap_err();
    assert!(e.contains("kill.order") && e.contains("cost_model = false"), "{e}");
    let without = text.replace("cost_model = true", "cost_model = false");
    assert_eq!(Preset::from_toml("mine", &without).unwrap().kill.mode, KillMode::Never, "no [kill]: the kernel's");
}

#[test]
fn minfree_scales_and_picks_the_most_severe_level() {
    let Detection::Minfree(m) = Preset::by_name("lmk-classic").unwrap().detection else { panic!("minfree") };
    // 1 GiB: empty at 32 MiB, foreground at 8 MiB (thesis §2.6.2).
    let levels = m.scaled(1 << 30);
    assert_eq!(levels[5], (Class::Empty, 32 * MIB));
    assert_eq!(levels[0], (Class::Foreground, 8 * MIB));
    assert_eq!(m.scaled(512 << 20)[5].1, 16 * MIB);
    assert_eq!(m.min_class(1 << 30, 30 * MIB, 10 * MIB), Some((Class::Empty, 32 * MIB)));
    assert_eq!(m.min_class(1 << 30, 20 * MIB, 10 * MIB), Some((Class::Previous, 24 * MIB)));
    assert_eq!(m.min_class(1 << 30, 7 * MIB, 0), Some((Class::Foreground, 8 * MIB)));
    assert_eq!(m.min_class(1 << 30, 40 * MIB, 0), None);
    assert_eq!(m.min_class(1 << 30, 20 * MIB, 100 * MIB), None, "plenty of file cache: no kill");
}
