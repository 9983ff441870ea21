//! A table as an HTML table: figures in `class="number"` cells (right-aligned by the report's
//! stylesheet), a missing figure's reason in its `title`, every text escaped; the notes as
//! paragraphs under it.

use std::fmt::Write;

use super::{Align, Cell, Table};

pub fn render(table: &Table) -> String {
    let mut html = String::from("<table>\n<thead><tr>");
    for column in &table.columns {
        let _ = write!(
            html,
            "<th{}>{}</th>",
            class(column.align),
            escape(&column.name)
        );
    }
    html.push_str("</tr></thead>\n<tbody>\n");
    for row in table.cells() {
        html.push_str("<tr>");
        for (column, cell) in row {
            let title = match cell {
                Cell::Missing(reason) | Cell::NotApplicable(reason) if !reason.is_empty() => {
                    format!(" title=\"{}\"", escape(reason))
                }
                _ => String::new(),
            };
            let _ = write!(
                html,
                "<td{}{title}>{}</td>",
                class(column.align),
                escape(&cell.shown(column))
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table>\n");
    for note in &table.notes {
        let _ = writeln!(html, "<p>{}</p>", escape(note));
    }
    html
}

fn class(align: Align) -> &'static str {
    match align {
        Align::Left => "",
        Align::Right => " class=\"number\"",
    }
}

/// Text with HTML's special characters escaped: nothing in a record can open markup.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::super::{Column, Unit};
    use super::*;

    #[test]
    fn figures_sit_right_text_is_escaped_and_a_missing_figure_says_why() {
        let mut table = Table::new(vec![
            Column::text("configuration"),
            Column::figure("PSS <peak>", Unit::Mib, 1),
        ]);
        table.push(vec![
            Cell::text("cases=smoke2&maxTokens=2 </td><script>"),
            Cell::Missing("no \"PSS\" sample".into()),
        ]);
        table.push(vec![Cell::text("b"), Cell::Figure(1.5 * 1024.0 * 1024.0)]);
        table.note("a & b");
        assert_eq!(
            render(&table),
            "<table>\n<thead><tr><th>configuration</th><th class=\"number\">PSS &lt;peak&gt;</th></tr></thead>\n\
             <tbody>\n\
             <tr><td>cases=smoke2&amp;maxTokens=2 &lt;/td&gt;&lt;script&gt;</td>\
             <td class=\"number\" title=\"no &quot;PSS&quot; sample\">-</td></tr>\n\
             <tr><td>b</td><td class=\"number\">1.5</td></tr>\n\
             </tbody>\n</table>\n<p>a &amp; b</p>\n"
        );
    }
}
