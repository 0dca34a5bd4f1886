//! memorch.toml(5), made from the documented default file: each key's comment there is its entry here, so the page says
//! what `memorch config --defaults` says.

/// The page, in roff, from the default config's text.
pub fn render(defaults: &str) -> String {
    let mut page = String::from(concat!(
        ".TH MEMORCH.TOML 5 \"\" \"memorch ",
        env!("CARGO_PKG_VERSION"),
        "\" \"File Formats\"\n",
        ".SH NAME\nmemorch.toml \\- the configuration of the memorch daemon\n",
        ".SH SYNOPSIS\n/etc/memorch/memorch.toml\n",
        ".SH DESCRIPTION\n",
    ));
    let mut comment: Vec<&str> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    for line in defaults.lines().map(str::trim) {
        if let Some(text) = line.strip_prefix('#') {
            flush_keys(&mut page, &mut keys, &mut comment);
            comment.push(text.trim());
        } else if line.is_empty() {
            flush_keys(&mut page, &mut keys, &mut comment);
            prose(&mut page, &mut comment);
        } else if line.starts_with('[') {
            flush_keys(&mut page, &mut keys, &mut comment);
            page.push_str(&format!(".SS {}\n", escape(line)));
            prose(&mut page, &mut comment);
        } else {
            keys.push(key_tag(line));
        }
    }
    flush_keys(&mut page, &mut keys, &mut comment);
    prose(&mut page, &mut comment);
    page.push_str(concat!(
        ".SH FILES\n/etc/memorch/memorch.toml (the packaged service's; every key commented out)\n",
        ".SH SEE ALSO\nmemorch(1), memorch-run(1), memorch-config(1), memorch-presets(1)\n",
    ));
    page
}

/// `name = value` as a bold name and its default.
fn key_tag(line: &str) -> String {
    match line.split_once('=') {
        Some((k, v)) => format!("\\fB{}\\fR = {}", escape(k.trim()), escape(v.trim())),
        None => escape(line),
    }
}

/// Keys that share the comment above them: one tagged paragraph.
fn flush_keys(page: &mut String, keys: &mut Vec<String>, comment: &mut Vec<&str>) {
    if keys.is_empty() {
        return;
    }
    page.push_str(&format!(".TP\n{}\n", keys.join(", ")));
    page.push_str(&escape(&comment.join(" ")));
    page.push('\n');
    keys.clear();
    comment.clear();
}

/// A comment not above a key: a paragraph, its TOML examples kept as written.
fn prose(page: &mut String, comment: &mut Vec<&str>) {
    if comment.is_empty() {
        return;
    }
    let example_at = comment.iter().position(|l| l.starts_with('[')).unwrap_or(comment.len());
    page.push_str(&format!(".PP\n{}\n", escape(&comment[..example_at].join(" "))));
    if example_at < comment.len() {
        page.push_str(".PP\n.nf\n");
        for l in &comment[example_at..] {
            page.push_str(&format!("{}\n", escape(l)));
        }
        page.push_str(".fi\n");
    }
    comment.clear();
}

/// Text as roff reads it: backslashes and hyphens escaped; no line starts a request.
fn escape(text: &str) -> String {
    let s = text.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn every_key_of_the_defaults_has_an_entry_with_its_comment() {
        let page = render(memorch_daemon::config::DEFAULTS);
        assert!(page.contains("\\fBpsi_some_stall_ms\\fR = 70, \\fBpsi_full_stall_ms\\fR = 700"));
        assert!(page.contains(".SS [loop]\n"));
        assert!(page.contains("A cheap snapshot (memory, PSI, swap, zram, KSM) this often"));
        for line in memorch_daemon::config::DEFAULTS.lines().filter(|l| l.contains(" = ") && !l.starts_with('#')) {
            let key = line.split(" = ").next().unwrap().trim();
            assert!(page.contains(&format!("\\fB{key}\\fR = ")), "no entry for {key}");
        }
    }

    #[test]
    fn a_toml_example_in_a_comment_stays_a_literal_block() {
        let page = render("[apps]\n# Rules, e.g.\n# [[apps.rules]]\n# name = \"x\"\n\n");
        assert!(page.contains(".nf\n[[apps.rules]]\nname = \"x\"\n.fi\n"), "{page}");
    }

    #[test]
    fn a_line_that_would_be_a_roff_request_is_escaped() {
        let page = render("# .so /etc/passwd\nkey = \"a\\\\b\"\n");
        assert!(page.contains("\\&.so /etc/passwd"), "{page}");
        assert!(page.contains("a\\e\\eb"), "{page}");
    }
}
