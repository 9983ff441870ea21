//! A table as CSV: a header of the columns (each with its unit where the name lacks it), a
//! line per row, figures plain in their column's unit and an empty field where there is none.
//! CSV holds data only: the notes are left to the other formats.

use super::Table;

pub fn render(table: &Table) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    // Writing into memory fails only on a bug of the csv crate: say so rather than lose rows.
    writer
        .write_record(table.columns.iter().map(|c| c.csv_header()))
        .expect("CSV into memory");
    for row in table.cells() {
        writer
            .write_record(row.iter().map(|(column, cell)| cell.csv(column)))
            .expect("CSV into memory");
    }
    String::from_utf8(writer.into_inner().expect("CSV into memory")).expect("UTF-8 fields")
}

#[cfg(test)]
mod tests {
    use super::super::{Cell, Column, Unit};
    use super::*;

    #[test]
    fn figures_are_plain_missing_ones_empty_and_text_quoted_where_it_must_be() {
        let mut table = Table::new(vec![
            Column::text("configuration"),
            Column::figure("GPU", Unit::Mib, 0).with_unit_in_cells(),
            Column::figure("K=1/this", Unit::Ratio, 2).with_unit_in_cells(),
            Column::figure("whole set", Unit::Ms, 1).with_unit_in_cells(),
        ]);
        table.push(vec![
            Cell::text("decoder=gather-opt, \"fast\""),
            Cell::Figure(404.0 * 1024.0 * 1024.0),
            Cell::Missing("no first row".into()),
            Cell::Figure(12_345.0),
        ]);
        table.note("not in the CSV");
        assert_eq!(
            render(&table),
            "configuration,GPU (MiB),K=1/this (ratio),whole set (ms)\n\
             \"decoder=gather-opt, \"\"fast\"\"\",404.0,,12345.00\n"
        );
    }
}
