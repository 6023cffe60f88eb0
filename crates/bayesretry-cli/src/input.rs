//! Opening inputs: a named file, or standard input.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use crate::error::Error;

/// The name standard input goes by in messages.
pub(crate) const STDIN: &str = "<stdin>";

/// An opened input and the name it goes by in messages.
pub(crate) struct Input {
    pub(crate) name: String,
    pub(crate) reader: Box<dyn Read>,
    /// Whether it is a regular file (links followed), not standard input, a
    /// pipe or a device.
    pub(crate) regular: bool,
}

/// Opens `path`, or standard input when it is `None` or `-`.
pub(crate) fn open(path: Option<&Path>) -> Result<Input, Error> {
    match path {
        None => Ok(stdin()),
        Some(path) if path.as_os_str() == "-" => Ok(stdin()),
        Some(path) => {
            let (file, regular) = open_file(path)?;
            Ok(Input {
                name: path.display().to_string(),
                reader: Box::new(file),
                regular,
            })
        }
    }
}

/// Opens the file at `path` for reading, and says whether it is a regular
/// file; a directory is refused here rather than failing at the first read, so
/// that it is reported as missing input.
fn open_file(path: &Path) -> Result<(File, bool), Error> {
    let shown = path.display().to_string();
    let file = File::open(path).map_err(|error| Error::no_input(&shown, &error))?;
    let metadata = file
        .metadata()
        .map_err(|error| Error::no_input(&shown, &error))?;
    if metadata.is_dir() {
        return Err(Error::no_input(
            &shown,
            &io::Error::from(io::ErrorKind::IsADirectory),
        ));
    }
    Ok((file, metadata.is_file()))
}

fn stdin() -> Input {
    Input {
        name: String::from(STDIN),
        reader: Box::new(io::stdin().lock()),
        regular: false,
    }
}
