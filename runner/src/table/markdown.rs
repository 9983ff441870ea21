//! A table as a markdown pipe table: the header, the alignment row (`---:` right), a line per
//! row, `|` in a cell escaped; the notes as lines under it.

use super::{Align, Table};

pub fn render(table: &Table) -> String {
    let mut out = String::new();
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    out.push_str(&line(
        table.columns.iter().map(|c| escape(&c.name)).collect(),
    ));
    for column in &table.columns {
        out.push_str(match column.align {
            Align::Left => "|---",
            Align::Right => "|---:",
        });
    }
    out.push_str("|\n");
    for row in table.cells() {
        out.push_str(&line(
            row.iter()
                .map(|(column, cell)| escape(&cell.shown(column)))
                .collect(),
        ));
    }
    if !table.notes.is_empty() {
        out.push('\n');
        for note in &table.notes {
            out.push_str(note);
            out.push('\n');
        }
    }
    out
}

/// `|`-escaped, so that a cell stays one cell.
pub fn escape(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::super::{Cell, Column, Unit};
    use super::*;

    #[test]
    fn columns_align_cells_escape_and_notes_follow() {
        let mut table = Table::new(vec![
            Column::text("configuration"),
            Column::figure("GPU MiB", Unit::Mib, 0),
            Column::figure("nCER", Unit::None, 4),
        ]);
        table.push(vec![
            Cell::text("a|b"),
            Cell::Figure(3.0 * 1024.0 * 1024.0),
            Cell::Missing("no case finished".into()),
        ]);
        table.note("nCER: the mean over the runs.");
        assert_eq!(
            render(&table),
            "| configuration | GPU MiB | nCER |\n|---|---:|---:|\n| a\\|b | 3 | - |\n\n\
             nCER: the mean over the runs.\n"
        );
    }
}
