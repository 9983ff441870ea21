//! The report's markdown summary as HTML, written into the static page so that it says
//! something before its charts are drawn and without JavaScript at all. Only what
//! `summary.rs` writes is read: headings, pipe tables, list items and paragraphs, with
//! `code` spans; everything else is text.

use std::fmt::Write;

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
        } else if trimmed.starts_with('|') {
            let mut rows = vec![trimmed];
            while let Some(next) = lines.next_if(|l| l.trim().starts_with('|')) {
                rows.push(next.trim());
            }
            table(&mut html, &rows);
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

/// A pipe table: a header row, the alignment row (`---:` right-aligned), the body rows.
fn table(html: &mut String, rows: &[&str]) {
    let cells = |row: &str| -> Vec<String> {
        let row = row.trim().trim_start_matches('|').trim_end_matches('|');
        row.split('|').map(|cell| cell.trim().to_owned()).collect()
    };
    let is_alignment = |row: &str| {
        cells(row)
            .iter()
            .all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':')))
    };
    let (header, body, right) = match rows {
        [header, alignment, body @ ..] if is_alignment(alignment) => (
            Some(cells(header)),
            body,
            cells(alignment).iter().map(|c| c.ends_with(':')).collect(),
        ),
        _ => (None, rows, Vec::new()),
    };
    let align = |column: usize| {
        if right.get(column).copied().unwrap_or(false) {
            " class=\"number\""
        } else {
            ""
        }
    };
    html.push_str("<table>\n");
    if let Some(header) = header {
        html.push_str("<thead><tr>");
        for (column, cell) in header.iter().enumerate() {
            let _ = write!(html, "<th{}>{}</th>", align(column), inline(cell));
        }
        html.push_str("</tr></thead>\n");
    }
    html.push_str("<tbody>\n");
    for row in body {
        html.push_str("<tr>");
        for (column, cell) in cells(row).iter().enumerate() {
            let _ = write!(html, "<td{}>{}</td>", align(column), inline(cell));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table>\n");
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

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_headings_lists_and_paragraphs_become_html() {
        let markdown = "# webgpu-ocr-bench report\n\n2 runs from `a.jsonl`.\n\n\
                        | configuration | nCER |\n|---|---:|\n| cases=smoke2&maxTokens=2 | 0.6000 |\n\n\
                        ## Where the memory went\n\n- one <note>\n- two\n";
        let html = markdown_to_html(markdown);
        assert_eq!(
            html,
            "<p>2 runs from <code>a.jsonl</code>.</p>\n\
             <table>\n<thead><tr><th>configuration</th><th class=\"number\">nCER</th></tr></thead>\n\
             <tbody>\n<tr><td>cases=smoke2&amp;maxTokens=2</td><td class=\"number\">0.6000</td></tr>\n\
             </tbody>\n</table>\n\
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
