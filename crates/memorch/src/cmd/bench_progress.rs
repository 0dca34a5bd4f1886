//! What `memorch bench` shows while it runs: a bar over every step of every run on a terminal, a line every tenth of a
//! run otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use memorch_bench::campaign::Progress;
use memorch_bench::results::RunResult;
use std::io::IsTerminal;
use std::sync::Mutex;

/// Progress on a terminal: a bar over every step of every run, with the run, the visit and an ETA; plain lines when not
/// a terminal (a log, CI).
pub struct Shown {
    bar: Option<ProgressBar>,
    run: Mutex<String>,
}

impl Shown {
    pub fn new(total_steps: usize) -> Shown {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(total_steps as u64);
            b.set_style(
                ProgressStyle::with_template("{bar:30.cyan/blue} {pos}/{len} steps, ETA {eta} | {msg}")
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            b
        });
        Shown { bar, run: Mutex::new(String::new()) }
    }

    pub fn say(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    pub fn done(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Progress for Shown {
    fn prepare(&self, what: &str) {
        self.say(&format!("preparing: {what}"));
    }

    fn run_started(&self, n: usize, total: usize, manager: &str, rep: u64, steps: usize) {
        let label = format!("[{n}/{total}] {manager} (repeat {})", rep + 1);
        if self.bar.is_none() {
            eprintln!("{label}: {steps} steps");
        }
        *self.run.lock().expect("progress") = label;
    }

    fn step(&self, step: usize, steps: usize, what: &str) {
        let run = self.run.lock().expect("progress").clone();
        match &self.bar {
            Some(b) => {
                b.set_message(format!("{run} step {}/{steps}: {what}", step + 1));
                b.inc(1);
            }
            // A line every tenth of a run, so a log shows progress without a line a visit.
            None if step.is_multiple_of((steps / 10).max(1)) => eprintln!("{run}: step {}/{steps}", step + 1),
            None => {}
        }
    }

    fn run_finished(&self, r: &RunResult) {
        let run = self.run.lock().expect("progress").clone();
        let failed = if r.failed() > 0 { format!(", {} FAILED", r.failed()) } else { String::new() };
        self.say(&format!(
            "{run}: {} visits served{failed} in {:.0} s, {} kills",
            r.served(),
            r.duration_s,
            r.kills.len()
        ));
    }

    fn note(&self, msg: &str) {
        self.say(&format!("memorch bench: {msg}"));
    }
}
