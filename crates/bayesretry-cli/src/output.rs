//! [`Output`]: where a command's report goes, with write errors made [`Error`]s.

use std::io::Write;

use serde::Serialize;

use crate::error::Error;

/// A command's report stream (standard output in the binary, a buffer in tests).
pub(crate) struct Output<'a> {
    name: &'a str,
    writer: &'a mut dyn Write,
}

impl<'a> Output<'a> {
    /// Writes to `writer`, called `name` in error messages.
    pub(crate) fn new(name: &'a str, writer: &'a mut dyn Write) -> Output<'a> {
        Output { name, writer }
    }

    /// Writes `text` as it is.
    pub(crate) fn text(&mut self, text: &str) -> Result<(), Error> {
        self.writer
            .write_all(text.as_bytes())
            .and_then(|()| self.writer.flush())
            .map_err(|error| Error::Write {
                path: self.name.to_owned(),
                error,
            })
    }
}

/// Writes `value` as pretty-printed JSON and a newline.
pub(crate) fn write_json<T: Serialize>(out: &mut Output<'_>, value: &T) -> Result<(), Error> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::Internal(format!("cannot write JSON: {e}")))?;
    text.push('\n');
    out.text(&text)
}
