//! Tables as data: columns (a name, a unit, an alignment, the places figures are written to),
//! rows of typed cells and notes, written by one renderer per format (`table/markdown.rs`,
//! `table/html.rs`, `table/csv.rs`). A command builds its table once and every format shows
//! the same figures: a column added here is in all of them.
//!
//! This module sits on the runner's ground floor: it takes the units (`units.rs`) and nothing
//! else of the runner.

pub mod csv;
pub mod html;
pub mod markdown;

use crate::units;

/// Where a column's cells sit: text left, figures right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// What a column's figures are in; the renderers write a cell by its column's unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Words, or a figure with no unit (nCER).
    None,
    /// Bytes, written in MiB.
    Mib,
    Ms,
    /// One figure over another.
    Ratio,
    /// Something counted: whole where it is, one decimal where a median of two halves it.
    Count,
}

impl Unit {
    /// The unit as a CSV header writes it after the column's name (`GPU (MiB)`).
    fn csv_suffix(self) -> &'static str {
        match self {
            Unit::Mib => "MiB",
            Unit::Ms => "ms",
            Unit::Ratio => "ratio",
            Unit::None | Unit::Count => "",
        }
    }
}

/// A column: what its cells are and how they are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub unit: Unit,
    pub align: Align,
    /// Decimals of a figure (not of a count).
    pub places: usize,
    /// Whether each cell says its unit (`404 MiB`, `2.50x`, `12.3 ms`; from 10 s in seconds to
    /// two places, `16.34 s`) rather than the column's name.
    pub unit_in_cells: bool,
}

impl Column {
    /// A column of words, left-aligned.
    pub fn text(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            unit: Unit::None,
            align: Align::Left,
            places: 0,
            unit_in_cells: false,
        }
    }

    /// A column of figures in `unit` to `places` decimals, right-aligned.
    pub fn figure(name: impl Into<String>, unit: Unit, places: usize) -> Self {
        Self {
            name: name.into(),
            unit,
            align: Align::Right,
            places,
            unit_in_cells: false,
        }
    }

    /// The same column with its unit in every cell.
    pub fn with_unit_in_cells(mut self) -> Self {
        self.unit_in_cells = true;
        self
    }

    /// The same column aligned otherwise.
    pub fn aligned(mut self, align: Align) -> Self {
        self.align = align;
        self
    }

    /// The header as CSV writes it: the name, and the unit where the name does not say it.
    pub fn csv_header(&self) -> String {
        let suffix = self.unit.csv_suffix();
        if suffix.is_empty() || self.name.contains(suffix) {
            self.name.clone()
        } else {
            format!("{} ({suffix})", self.name)
        }
    }
}

/// One cell: a figure in its column's unit, words, or why there is no figure.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(String),
    /// A figure: bytes in a MiB column, ms, a ratio, a count or a plain number.
    Figure(f64),
    /// No figure, shown as `-`; the reason is for the reader of the HTML (a tooltip).
    Missing(String),
    /// A figure that does not apply here, shown as `n/a`.
    NotApplicable(String),
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Self {
        Cell::Text(text.into())
    }

    /// A figure where there is one, else missing for `reason`.
    pub fn figure_or(value: Option<f64>, reason: &str) -> Self {
        value.map_or_else(|| Cell::Missing(reason.to_owned()), Cell::Figure)
    }

    /// Bytes where there are some, else missing for `reason`.
    pub fn bytes_or(bytes: Option<impl units::Bytes>, reason: &str) -> Self {
        Cell::figure_or(bytes.map(units::Bytes::as_f64), reason)
    }

    /// The cell as markdown and HTML show it, written by its column.
    pub fn shown(&self, column: &Column) -> String {
        match self {
            Cell::Text(text) => text.clone(),
            Cell::Missing(_) => "-".to_owned(),
            Cell::NotApplicable(_) => "n/a".to_owned(),
            Cell::Figure(value) => shown_figure(*value, column),
        }
    }

    /// The cell as CSV writes it: figures plain in the column's unit, no figure empty.
    pub fn csv(&self, column: &Column) -> String {
        match (self, column.unit) {
            (Cell::Text(text), _) => text.clone(),
            (Cell::Missing(_) | Cell::NotApplicable(_), _) => String::new(),
            (Cell::Figure(bytes), Unit::Mib) => units::mib(*bytes, column.places.max(1)),
            (Cell::Figure(value), Unit::Count) => count(*value),
            (Cell::Figure(value), _) => format!("{value:.*}", column.places.max(2)),
        }
    }
}

fn count(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

fn shown_figure(value: f64, column: &Column) -> String {
    let places = column.places;
    match (column.unit, column.unit_in_cells) {
        (Unit::Mib, false) => units::mib(value, places),
        (Unit::Mib, true) => units::mib_with_unit(value, places),
        (Unit::Ratio, true) => format!("{value:.places$}x"),
        // A whole set's time: seconds to two places read better than five digits of ms.
        (Unit::Ms, true) if value >= 10_000.0 => format!("{:.2} s", value / 1000.0),
        (Unit::Ms, true) => format!("{value:.places$} ms"),
        (Unit::Count, _) => count(value),
        (Unit::None | Unit::Ms | Unit::Ratio, _) => format!("{value:.places$}"),
    }
}

/// A table: its columns, a row of cells per thing it compares, and notes under it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    pub notes: Vec<String>,
}

impl Table {
    pub fn new(columns: Vec<Column>) -> Self {
        Self {
            columns,
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Adds a row; it has a cell per column (a builder's mistake otherwise, caught by tests).
    pub fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(row.len(), self.columns.len(), "a cell per column");
        self.rows.push(row);
    }

    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// Tables of the same rows side by side, for a format that holds one table (CSV): the first
    /// table whole, then every other's columns but its first (the rows' name, said once).
    pub fn beside(tables: &[Table]) -> Table {
        let mut joined = tables.first().cloned().unwrap_or_default();
        for table in tables.iter().skip(1) {
            debug_assert_eq!(table.rows.len(), joined.rows.len(), "the same rows");
            joined.columns.extend(table.columns.iter().skip(1).cloned());
            for (row, more) in joined.rows.iter_mut().zip(&table.rows) {
                row.extend(more.iter().skip(1).cloned());
            }
            joined.notes.extend(table.notes.iter().cloned());
        }
        joined
    }

    /// The cells of each row with their columns.
    pub fn cells(&self) -> impl Iterator<Item = Vec<(&Column, &Cell)>> {
        self.rows
            .iter()
            .map(|row| self.columns.iter().zip(row).collect())
    }
}

/// How a command writes its tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Markdown,
    Csv,
    Html,
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "markdown" => Ok(Format::Markdown),
            "csv" => Ok(Format::Csv),
            "html" => Ok(Format::Html),
            other => Err(format!(
                "unknown format {other:?}; allowed: markdown, csv, html"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_is_written_by_its_column() {
        let gpu = Column::figure("GPU", Unit::Mib, 0);
        assert_eq!(Cell::Figure(404.0 * units::MIB).shown(&gpu), "404");
        assert_eq!(
            Cell::Figure(404.0 * units::MIB).shown(&gpu.clone().with_unit_in_cells()),
            "404 MiB"
        );
        assert_eq!(Cell::Figure(404.0 * units::MIB).csv(&gpu), "404.0");
        let set = Column::figure("whole set", Unit::Ms, 2).with_unit_in_cells();
        assert_eq!(Cell::Figure(12_345.0).shown(&set), "12.35 s");
        assert_eq!(Cell::Figure(123.0).shown(&set), "123.00 ms");
        assert_eq!(Cell::Figure(12_345.0).csv(&set), "12345.00");
        let ratio = Column::figure("K=1/this", Unit::Ratio, 2).with_unit_in_cells();
        assert_eq!(Cell::Figure(2.5).shown(&ratio), "2.50x");
        let count = Column::figure("dispatches", Unit::Count, 0);
        assert_eq!(Cell::Figure(12.0).shown(&count), "12");
        assert_eq!(Cell::Figure(12.5).shown(&count), "12.5");
        assert_eq!(Cell::Missing("no sample".into()).shown(&count), "-");
        assert_eq!(Cell::NotApplicable("not read".into()).shown(&count), "n/a");
        assert_eq!(Cell::Missing("no sample".into()).csv(&count), "");
        assert_eq!(Cell::bytes_or(None::<u64>, "none").shown(&gpu), "-");
    }

    #[test]
    fn a_csv_header_names_the_unit_once() {
        assert_eq!(
            Column::figure("GPU", Unit::Mib, 0).csv_header(),
            "GPU (MiB)"
        );
        assert_eq!(
            Column::figure("peak GPU MiB, page", Unit::Mib, 0).csv_header(),
            "peak GPU MiB, page"
        );
        assert_eq!(Column::text("configuration").csv_header(), "configuration");
    }

    #[test]
    fn tables_beside_each_other_name_their_rows_once() {
        let mut first = Table::new(vec![Column::text("name"), Column::figure("a", Unit::Ms, 1)]);
        first.push(vec![Cell::text("x"), Cell::Figure(1.0)]);
        let mut second = Table::new(vec![Column::text("name"), Column::figure("b", Unit::Ms, 1)]);
        second.push(vec![Cell::text("x"), Cell::Figure(2.0)]);
        second.note("b is later");
        let joined = Table::beside(&[first, second]);
        let names: Vec<&str> = joined.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["name", "a", "b"]);
        assert_eq!(
            joined.rows,
            [vec![Cell::text("x"), Cell::Figure(1.0), Cell::Figure(2.0)]]
        );
        assert_eq!(joined.notes, ["b is later"]);
    }

    #[test]
    fn a_format_is_one_of_three() {
        assert_eq!("csv".parse(), Ok(Format::Csv));
        assert_eq!(
            "tsv".parse::<Format>(),
            Err("unknown format \"tsv\"; allowed: markdown, csv, html".to_owned())
        );
    }
}
