//! The report as it is built: prose (markdown: headings, paragraphs, lists) and tables (the
//! table model), in order. `report` prints it as markdown and `report --out` writes it as HTML
//! from the same tables, so the two cannot say different things.

use std::fmt;

use super::prose_html::markdown_to_html;
use crate::table::{html, markdown, Table};

enum Block {
    Prose(String),
    Table(Table),
}

/// Prose is written into it with `write!` as into a `String`; tables are added whole.
#[derive(Default)]
pub struct Document {
    blocks: Vec<Block>,
}

impl Document {
    pub fn table(&mut self, table: Table) {
        self.blocks.push(Block::Table(table));
    }

    pub fn markdown(&self) -> String {
        self.blocks
            .iter()
            .map(|block| match block {
                Block::Prose(text) => text.clone(),
                Block::Table(table) => markdown::render(table),
            })
            .collect()
    }

    /// The HTML of the page's tables section; the prose's level-1 heading is left out (the
    /// page has its own title).
    pub fn html(&self) -> String {
        self.blocks
            .iter()
            .map(|block| match block {
                Block::Prose(text) => markdown_to_html(text),
                Block::Table(table) => html::render(table),
            })
            .collect()
    }
}

impl fmt::Write for Document {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        match self.blocks.last_mut() {
            Some(Block::Prose(prose)) => prose.push_str(text),
            _ => self.blocks.push(Block::Prose(text.to_owned())),
        }
        Ok(())
    }
}
