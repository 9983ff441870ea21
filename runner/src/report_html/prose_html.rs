//! The prose of the report's summary as HTML, written into the static page with its tables
//! (the table model's own HTML, `table/html.rs`) so that it says something before its charts
//! are drawn and without JavaScript at all. Only what `summary.rs` writes as prose is read:
//! headings, list items and paragraphs, with `code` spans; everything else is text.

use std::fmt::Write;

use crate::table::html::escape;

/// The markdown as HTML; its level-1 heading is left out (the page has its own title).
pub fn markdown_to_html(markdown: &str) -> String {
    let mut html = String::new();
    let mut lines = markdown.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with("# ") {
            continue;
        }
        if let Some((level, title)) = heading(trimmed) {
            let _ = writeln!(html, "<h{level}>{}</h{level}>", inline(title));
        } else if let Some(item) = trimmed.strip_prefix("- ") {
            let mut items = vec![item];
            while let Some(next) = lines.next_if(|l| l.trim().starts_with("- ")) {
                items.push(&next.trim()[2..]);
            }
            html.push_str("<ul>\n");
            for item in items {
                let _ = writeln!(html, "<li>{}</li>", inline(item));
            }
            html.push_str("</ul>\n");
        } else {
            let _ = writeln!(html, "<p>{}</p>", inline(trimmed));
        }
    }
    html
}

/// `## Title` as (2, "Title"), for levels 2 to 6.
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|&b| b == b'#').count();
    let title = line[level..].strip_prefix(' ')?;
    (2..=6).contains(&level).then_some((level, title))
}

/// Text with HTML's special characters escaped and `code` spans marked.
fn inline(text: &str) -> String {
    let escaped = escape(text);
    let mut out = String::with_capacity(escaped.len());
    for (index, piece) in escaped.split('`').enumerate() {
        // Odd pieces sit between backticks; an unpaired last one stays text.
        let unpaired = index % 2 == 1 && index == escaped.matches('`').count();
        match (index % 2 == 1, unpaired) {
            (true, false) => {
                let _ = write!(out, "<code>{piece}</code>");
            }
            (true, true) => {
                out.push('`');
                out.push_str(piece);
            }
            _ => out.push_str(piece),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_lists_and_paragraphs_become_html() {
        let markdown = "# webgpu-ocr-bench report\n\n2 runs from `a.jsonl`.\n\n\
                        ## Where the memory went\n\n- one <note>\n- two\n";
        let html = markdown_to_html(markdown);
        assert_eq!(
            html,
            "<p>2 runs from <code>a.jsonl</code>.</p>\n\
             <h2>Where the memory went</h2>\n\
             <ul>\n<li>one &lt;note&gt;</li>\n<li>two</li>\n</ul>\n"
        );
    }

    #[test]
    fn nothing_in_a_record_can_open_markup() {
        let html = markdown_to_html("a </script><script>alert(1)</script> `x` and a lone ` tick");
        assert!(!html.contains("<script"), "{html}");
        assert_eq!(
            html,
            "<p>a &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; <code>x</code> and a \
             lone ` tick</p>\n"
        );
    }
}
