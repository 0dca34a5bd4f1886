//! App importance classes, in Android's `oom_score_adj` bands (docs/design.md, "Words"), so that Android and
//! non-Android inputs mean the same thing.

use serde::{Deserialize, Serialize};

/// The importance of an app. Ordered from most to least important: a later variant is compacted and killed before an
/// earlier one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// `oom_score_adj` < 0: system and persistent processes. memorch never acts on them.
    Native,
    /// 0..=99: the app the user is using.
    Foreground,
    /// 100..=199: visible but not in front.
    Visible,
    /// 200..=499: the user would notice it gone (music, a download).
    Perceptible,
    /// 500..=599: a background service.
    Service,
    /// 600..=699: the home screen or launcher.
    Home,
    /// 700..=899: the app the user used before this one.
    Previous,
    /// 900..=998: cached: kept only to launch faster.
    Cached,
    /// 999..=1000: cached with nothing of the user's in it.
    Empty,
}

impl Class {
    pub const ALL: [Class; 9] = [
        Class::Native,
        Class::Foreground,
        Class::Visible,
        Class::Perceptible,
        Class::Service,
        Class::Home,
        Class::Previous,
        Class::Cached,
        Class::Empty,
    ];

    /// The class of an `oom_score_adj` value (-1000..=1000).
    pub fn from_oom_score_adj(adj: i32) -> Class {
        match adj {
            i32::MIN..=-1 => Class::Native,
            0..=99 => Class::Foreground,
            100..=199 => Class::Visible,
            200..=499 => Class::Perceptible,
            500..=599 => Class::Service,
            600..=699 => Class::Home,
            700..=899 => Class::Previous,
            900..=998 => Class::Cached,
            _ => Class::Empty,
        }
    }

    /// The `oom_score_adj` memorch writes for a process of this class: the band's lower edge (Android's value), except
    /// `Empty`, which is the top of the range.
    pub fn oom_score_adj(self) -> i32 {
        match self {
            Class::Native => -1000,
            Class::Foreground => 0,
            Class::Visible => 100,
            Class::Perceptible => 200,
            Class::Service => 500,
            Class::Home => 600,
            Class::Previous => 700,
            Class::Cached => 900,
            Class::Empty => 999,
        }
    }

    /// The name used on the command line, in JSON and in logs.
    pub fn name(self) -> &'static str {
        match self {
            Class::Native => "native",
            Class::Foreground => "foreground",
            Class::Visible => "visible",
            Class::Perceptible => "perceptible",
            Class::Service => "service",
            Class::Home => "home",
            Class::Previous => "previous",
            Class::Cached => "cached",
            Class::Empty => "empty",
        }
    }

    /// Parse a class name as `name()` writes it.
    pub fn from_name(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether memorch may ever act on a process of this class.
    pub fn is_protected(self) -> bool {
        self == Class::Native
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_follow_android_oom_adj_values() {
        // Android ProcessList: FOREGROUND 0, VISIBLE 100, PERCEPTIBLE 200, SERVICE 500, HOME 600, PREVIOUS 700, CACHED
        // 900..999.
        let cases = [
            (-1000, Class::Native),
            (-1, Class::Native),
            (0, Class::Foreground),
            (99, Class::Foreground),
            (100, Class::Visible),
            (250, Class::Perceptible),
            (500, Class::Service),
            (600, Class::Home),
            (700, Class::Previous),
            (800, Class::Previous),
            (900, Class::Cached),
            (998, Class::Cached),
            (999, Class::Empty),
            (1000, Class::Empty),
        ];
        for (adj, class) in cases {
            assert_eq!(Class::from_oom_score_adj(adj), class, "adj {adj}");
        }
    }

    #[test]
    fn written_adj_maps_back_to_its_class_and_names_round_trip() {
        for class in Class::ALL {
            assert_eq!(Class::from_oom_score_adj(class.oom_score_adj()), class);
            assert_eq!(Class::from_name(class.name()), Some(class));
        }
        assert_eq!(Class::from_name("bogus"), None);
    }

    #[test]
    fn later_classes_are_less_important() {
        assert!(Class::Empty > Class::Cached);
        assert!(Class::Cached > Class::Foreground);
        assert!(Class::Foreground > Class::Native);
    }
}
