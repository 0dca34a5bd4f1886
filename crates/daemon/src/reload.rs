//! SIGHUP: the config file read again, the command line's settings on top.

use crate::config::Config;
use crate::daemon::Daemon;
use memorch_core::engine::Engine;

impl Daemon {
    /// Read the config again, the command line's settings on top; keep the old one if the new one is bad. A dry run
    /// stays one: only a restart without it arms memorch. Every change that takes effect is logged.
    pub(crate) fn reload(&mut self) {
        let Some(path) = self.config_path.clone() else {
            tracing::warn!("SIGHUP: started without --config, nothing to reload");
            return;
        };
        let mut new = match Config::load(&path) {
            Ok(c) => c,
            Err(e) => return tracing::error!(error = %e, "SIGHUP: new config rejected, keeping the old one"),
        };
        let file_arms = !new.dry_run;
        self.overrides.apply(&mut new);
        if self.cfg.dry_run && file_arms {
            tracing::warn!("SIGHUP: dry_run stays on: a reload never arms memorch; restart it without --dry-run and with dry_run = false to act");
            new.dry_run = true;
        }
        for key in ["domain", "socket", "state_dir", "log_format"] {
            if new.changes_from(&self.cfg).iter().any(|(k, _, _)| k == key) {
                tracing::warn!(key, "SIGHUP: {key} takes effect on restart only; kept as it was");
            }
        }
        let (domain, socket, state_dir, log_format) =
            (self.cfg.domain.clone(), self.cfg.socket.clone(), self.cfg.state_dir.clone(), self.cfg.log_format.clone());
        let new = Config { domain, socket, state_dir, log_format, ..new };
        let changes = new.changes_from(&self.cfg);
        if new.preset != self.cfg.preset {
            let stats = self.engine.state.stats.clone();
            self.engine = Engine::with_stats(new.preset(), stats);
            self.exec.set_preset(&self.engine.preset);
        }
        let rearm = new.preset != self.cfg.preset
            || new.loop_.psi_window_ms != self.cfg.loop_.psi_window_ms
            || new.loop_.psi_some_stall_ms != self.cfg.loop_.psi_some_stall_ms
            || new.loop_.psi_full_stall_ms != self.cfg.loop_.psi_full_stall_ms;
        self.exec.dry_run = new.dry_run;
        self.exec.manage = new.manage.clone();
        self.cfg = new;
        if rearm {
            // The triggers follow the preset's thresholds (an lmkd-style preset arms its own).
            self.triggers = crate::triggers::Triggers::new(crate::machine::arm_triggers(
                &self.domain,
                &self.cfg,
                &self.engine.preset,
            ));
        }
        if let Err(e) = self.notifier.follow_bus(&self.cfg.notify, self.engine.preset.trim_notices) {
            tracing::warn!(error = %e, "SIGHUP: trim notices go to socket listeners only");
        }
        self.polling = crate::polling::Polling::default();
        self.set_timer();
        for (key, old, new) in &changes {
            tracing::info!(key = %key, old = %old, new = %new, "config changed");
        }
        tracing::info!(preset = %self.cfg.preset, dry_run = self.cfg.dry_run, changes = changes.len(), "config reloaded");
    }
}
