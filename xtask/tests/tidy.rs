//! House rules, checked by `cargo test --workspace` like any other test.
//!
//! Each test reads the workspace's files as text and fails with the list of every
//! offending `file:line`, so one run shows everything there is to fix. The rules:
//!
//! - every member inherits the workspace lints and the `[workspace.package]` fields;
//! - every crate under `crates/` has a README.md and the two licence files, and its
//!   `lib.rs` (and `main.rs`) opens with the crate doc;
//! - no `todo!`, `unimplemented!`, `dbg!` or ignored test in the workspace's Rust code;
//! - every `allow` or `expect` attribute says why, with `reason = "..."`;
//! - no file uses a word from [`FORBIDDEN_WORDS`].
//!
//! The rules cover the Rust code of every directory in [`SOURCE_ROOTS`]; this file
//! is left out of the text checks, since it has to spell out what it looks for.

use core::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Directories, relative to the workspace root, whose files the text checks read.
/// Missing ones are skipped.
const SOURCE_ROOTS: &[&str] = &[
    "crates",
    "examples",
    "benches",
    "fuzz",
    "wasm-smoke",
    "xtask",
];

/// Members that write their own `[lints]` table instead of inheriting the
/// workspace's, and why. Each must still deny unsafe code.
const OWN_LINTS: &[(&str, &str)] = &[(
    "wasm-smoke",
    "exporting a symbol to the wasm host needs `#[unsafe(no_mangle)]`, which `forbid` rules out",
)];

/// This file, which names the strings it bans.
const THIS_FILE: &str = "xtask/tests/tidy.rs";

/// Strings that must not appear in Rust code, and why.
const BANNED: &[(&str, &str)] = &[
    (
        "todo!(",
        "`todo!` panics at run time; finish the code or file an issue",
    ),
    (
        "unimplemented!(",
        "`unimplemented!` panics at run time; finish the code or file an issue",
    ),
    ("dbg!(", "`dbg!` is for local debugging only"),
    (
        "#[ignore",
        "an ignored test never runs; fix it, or gate it on a feature",
    ),
];

/// Whole words (case-sensitive) that no file may contain. Kept short on purpose:
/// `FIXME` marks code known to be wrong, which is an issue to file rather than a
/// comment to ship. `TODO` stays allowed: it marks work not done yet, not a bug.
const FORBIDDEN_WORDS: &[&str] = &["FIXME"];

/// Attribute openings that must carry a `reason = "..."`.
const LINT_ATTRIBUTES: &[&str] = &["#[allow(", "#![allow(", "#[expect(", "#![expect("];

/// What a crate root may open with.
const CRATE_DOC_OPENINGS: &[&str] = &["//!", "#![doc = include_str!(\"../README.md\")]"];

#[test]
fn every_member_inherits_the_workspace_lints_and_package_fields() {
    let root = workspace_root();
    let mut problems = Vec::new();
    let root_manifest = read(&root.join("Cargo.toml"));
    let inherited = keys_of(&root_manifest, "workspace.package");
    assert!(
        !inherited.is_empty(),
        "the root Cargo.toml has no [workspace.package] fields"
    );

    let members = workspace_members(&root, &root_manifest, &mut problems);
    assert!(!members.is_empty(), "found no workspace members");
    for member in &members {
        let path = member.join("Cargo.toml");
        let shown = relative(&root, &path);
        let Some(text) = read_or_report(&path, &shown, &mut problems) else {
            continue;
        };
        let manifest = Manifest::parse(&text);

        match manifest.section("package") {
            None => problems.push(Problem::new(&shown, 1, "no [package] section")),
            Some(package) => {
                for key in &inherited {
                    if !package.has_line(&[
                        &format!("{key}.workspace=true"),
                        &format!("{key}={{workspace=true}}"),
                    ]) {
                        problems.push(Problem::new(
                            &shown,
                            package.line_of_key(key).unwrap_or(package.header_line),
                            format!("[package] must inherit `{key}`: `{key}.workspace = true`"),
                        ));
                    }
                }
            }
        }
        if OWN_LINTS.iter().any(|(dir, _)| member.ends_with(dir)) {
            let denies = manifest.section("lints.rust").is_some_and(|rust| {
                rust.has_line(&["unsafe_code=\"deny\"", "unsafe_code=\"forbid\""])
            });
            if !denies {
                problems.push(Problem::new(
                    &shown,
                    1,
                    "a member with its own lints must still deny `unsafe_code` in [lints.rust]",
                ));
            }
            continue;
        }
        match manifest.section("lints") {
            None => problems.push(Problem::new(
                &shown,
                1,
                "no [lints] section: add `[lints]` with `workspace = true`",
            )),
            Some(lints) => {
                if !lints.has_line(&["workspace=true"]) {
                    problems.push(Problem::new(
                        &shown,
                        lints.header_line,
                        "[lints] must say `workspace = true`",
                    ));
                }
            }
        }
    }
    report("members must inherit the workspace settings", &problems);
}

#[test]
fn every_crate_has_a_readme_and_licences_and_opens_with_its_crate_doc() {
    let root = workspace_root();
    let mut problems = Vec::new();
    for krate in crate_dirs(&root) {
        // The README is the crate doc; the licence texts must ship in the package,
        // which takes only files inside the crate's directory (links to the root's
        // copies are fine: cargo packages what they point to).
        for file in ["README.md", "LICENSE-MIT", "LICENSE-APACHE"] {
            let path = krate.join(file);
            if !path.is_file() {
                problems.push(Problem::new(&relative(&root, &path), 0, "missing"));
            }
        }
        let roots: Vec<PathBuf> = ["src/lib.rs", "src/main.rs"]
            .iter()
            .map(|file| krate.join(file))
            .filter(|path| path.is_file())
            .collect();
        if roots.is_empty() {
            let shown = relative(&root, &krate.join("src"));
            problems.push(Problem::new(&shown, 0, "neither lib.rs nor main.rs"));
        }
        for path in roots {
            let shown = relative(&root, &path);
            let Some(text) = read_or_report(&path, &shown, &mut problems) else {
                continue;
            };
            let first = text
                .lines()
                .enumerate()
                .find(|(_, line)| !line.trim().is_empty());
            let opens_with_doc = first.is_some_and(|(_, line)| {
                let line = line.trim();
                CRATE_DOC_OPENINGS
                    .iter()
                    .any(|opening| line.starts_with(opening))
            });
            if !opens_with_doc {
                let line = first.map_or(1, |(index, _)| index + 1);
                problems.push(Problem::new(
                    &shown,
                    line,
                    "must open with the crate doc: `//!` lines or \
                     `#![doc = include_str!(\"../README.md\")]`",
                ));
            }
        }
    }
    report("crates must be documented", &problems);
}

#[test]
fn no_unfinished_or_debugging_code() {
    let root = workspace_root();
    let mut problems = Vec::new();
    for (shown, text) in source_files(&root, Some("rs")) {
        for (index, line) in text.lines().enumerate() {
            for (needle, why) in BANNED {
                if line.contains(needle) {
                    problems.push(Problem::new(&shown, index + 1, *why));
                }
            }
        }
    }
    report("no unfinished or debugging code", &problems);
}

#[test]
fn every_allow_and_expect_gives_a_reason() {
    let root = workspace_root();
    let mut problems = Vec::new();
    for (shown, text) in source_files(&root, Some("rs")) {
        let lines: Vec<&str> = text.lines().collect();
        for (index, line) in lines.iter().enumerate() {
            let line = line.trim_start();
            if !LINT_ATTRIBUTES.iter().any(|open| line.starts_with(open)) {
                continue;
            }
            let attribute = attribute_text(&lines[index..]);
            let compact: String = attribute.split_whitespace().collect();
            if !compact.contains("reason=\"") {
                problems.push(Problem::new(
                    &shown,
                    index + 1,
                    format!("`{}` needs `reason = \"...\"`", attribute.trim()),
                ));
            }
        }
    }
    report("lint exceptions must say why", &problems);
}

#[test]
fn no_file_uses_a_forbidden_word() {
    let root = workspace_root();
    let mut problems = Vec::new();
    for (shown, text) in source_files(&root, None) {
        for (index, line) in text.lines().enumerate() {
            for word in FORBIDDEN_WORDS {
                if contains_word(line, word) {
                    problems.push(Problem::new(&shown, index + 1, format!("uses `{word}`")));
                }
            }
        }
    }
    report("forbidden words", &problems);
}

/// One broken rule, at a place in a file.
#[derive(Debug)]
struct Problem {
    file: String,
    /// 1-based; 0 when the problem is the file itself.
    line: usize,
    message: String,
}

impl Problem {
    fn new(file: &str, line: usize, message: impl Into<String>) -> Self {
        Self {
            file: file.to_owned(),
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

/// Fails the calling test with every problem, one per line.
fn report(rule: &str, problems: &[Problem]) {
    let list: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
    assert!(
        problems.is_empty(),
        "tidy: {rule}: {} problem(s)\n{}\n",
        problems.len(),
        list.join("\n")
    );
}

fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir).to_path_buf()
}

/// `path` relative to the root, with `/` separators, for messages.
fn relative(root: &Path, path: &Path) -> String {
    let path = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = path
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// Reads a file the test cannot do without.
fn read(path: &Path) -> String {
    let text = fs::read_to_string(path);
    assert!(text.is_ok(), "cannot read {}: {text:?}", path.display());
    text.unwrap_or_default()
}

/// Reads a file, or records why it could not be read.
fn read_or_report(path: &Path, shown: &str, problems: &mut Vec<Problem>) -> Option<String> {
    match fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(err) => {
            problems.push(Problem::new(shown, 0, format!("cannot read: {err}")));
            None
        }
    }
}

/// The directories holding a Cargo.toml directly under `crates/`, sorted.
fn crate_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = sorted_entries(&root.join("crates"))
        .into_iter()
        .filter(|dir| dir.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// The entries of a directory, sorted; none if it does not exist.
fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let entries = fs::read_dir(dir);
    if matches!(&entries, Err(err) if err.kind() == io::ErrorKind::NotFound) {
        return Vec::new();
    }
    assert!(
        entries.is_ok(),
        "cannot list {}: {entries:?}",
        dir.display()
    );
    let mut paths: Vec<PathBuf> = entries
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .collect();
    paths.sort();
    paths
}

/// Every text file under [`SOURCE_ROOTS`] (only those with extension `ext`, when
/// given), as (path for messages, contents). Skips build output, hidden
/// directories, files that are not UTF-8, and this file.
fn source_files(root: &Path, ext: Option<&str>) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut pending: Vec<PathBuf> = SOURCE_ROOTS.iter().map(|dir| root.join(dir)).collect();
    while let Some(dir) = pending.pop() {
        for path in sorted_entries(&dir) {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if ext.is_some_and(|ext| path.extension().is_none_or(|e| e != ext)) {
                continue;
            }
            let shown = relative(root, &path);
            if shown == THIS_FILE {
                continue;
            }
            if let Ok(text) = fs::read_to_string(&path) {
                files.push((shown, text));
            }
        }
    }
    files.sort();
    files
}

/// The text of the attribute that opens `lines[0]`, up to its closing `]`, however
/// many lines it spans. Brackets inside string literals are not counted.
fn attribute_text(lines: &[&str]) -> String {
    let mut text = String::new();
    let mut depth = 0_usize;
    let mut in_string = false;
    let mut escaped = false;
    for line in lines {
        for c in line.chars() {
            text.push(c);
            if in_string {
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => in_string = true,
                '[' => depth += 1,
                ']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return text;
                    }
                }
                _ => {}
            }
        }
        text.push('\n');
    }
    text
}

/// Whether `word` occurs in `line` with no letter, digit or `_` on either side.
fn contains_word(line: &str, word: &str) -> bool {
    let is_word_char = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(word).any(|(start, _)| {
        let before = line[..start].chars().next_back();
        let after = line[start + word.len()..].chars().next();
        !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
    })
}

/// A Cargo.toml read just far enough for these rules: section headers and the
/// lines under them, comments removed.
struct Manifest {
    sections: Vec<Section>,
}

struct Section {
    name: String,
    /// 1-based line of the `[name]` header.
    header_line: usize,
    /// (1-based line, text without comment), for each non-blank line.
    lines: Vec<(usize, String)>,
}

impl Manifest {
    fn parse(text: &str) -> Self {
        let mut sections: Vec<Section> = vec![Section {
            name: String::new(),
            header_line: 0,
            lines: Vec::new(),
        }];
        for (index, raw) in text.lines().enumerate() {
            let line = strip_comment(raw).trim();
            if line.is_empty() {
                continue;
            }
            let header = line
                .strip_prefix('[')
                .and_then(|rest| rest.strip_suffix(']'))
                .filter(|_| !line.starts_with("[["));
            match (header, sections.last_mut()) {
                (Some(name), _) => sections.push(Section {
                    name: name.trim().to_owned(),
                    header_line: index + 1,
                    lines: Vec::new(),
                }),
                (None, Some(section)) => section.lines.push((index + 1, line.to_owned())),
                (None, None) => {}
            }
        }
        Self { sections }
    }

    fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|section| section.name == name)
    }
}

impl Section {
    /// Whether some line, with all whitespace removed, is one of `forms`.
    fn has_line(&self, forms: &[&str]) -> bool {
        self.lines.iter().any(|(_, line)| {
            let compact: String = line.split_whitespace().collect();
            forms.contains(&compact.as_str())
        })
    }

    /// The line that sets `key` (plainly or dotted), if any.
    fn line_of_key(&self, key: &str) -> Option<usize> {
        self.lines
            .iter()
            .find(|(_, line)| key_of(line) == Some(key))
            .map(|(number, _)| *number)
    }
}

/// The first key of a `key = value` or `key.sub = value` line.
fn key_of(line: &str) -> Option<&str> {
    let (left, _) = line.split_once('=')?;
    left.split('.').next().map(str::trim)
}

/// The keys set under `[section]`, in order.
fn keys_of(text: &str, section: &str) -> Vec<String> {
    Manifest::parse(text)
        .section(section)
        .map(|section| {
            section
                .lines
                .iter()
                .filter_map(|(_, line)| key_of(line).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A line without its `#` comment; a `#` inside a string does not start one.
fn strip_comment(line: &str) -> &str {
    let mut in_string = false;
    for (index, c) in line.char_indices() {
        match c {
            '"' => in_string = !in_string,
            '#' if !in_string => return &line[..index],
            _ => {}
        }
    }
    line
}

/// The member directories named by `[workspace] members`, expanding `dir/*`.
fn workspace_members(root: &Path, manifest: &str, problems: &mut Vec<Problem>) -> Vec<PathBuf> {
    let parsed = Manifest::parse(manifest);
    let Some(workspace) = parsed.section("workspace") else {
        problems.push(Problem::new("Cargo.toml", 1, "no [workspace] section"));
        return Vec::new();
    };
    // `members` may span several lines: gather from its key to the closing `]`.
    let mut array = String::new();
    let mut inside = false;
    for (_, line) in &workspace.lines {
        if !inside && key_of(line) == Some("members") {
            inside = true;
        }
        if inside {
            array.push_str(line);
            if line.contains(']') {
                break;
            }
        }
    }
    let entries: Vec<&str> = array.split('"').skip(1).step_by(2).collect();

    let mut members = Vec::new();
    for entry in entries {
        if let Some(parent) = entry.strip_suffix("/*") {
            members.extend(
                sorted_entries(&root.join(parent))
                    .into_iter()
                    .filter(|dir| dir.join("Cargo.toml").is_file()),
            );
        } else if entry.contains(['*', '?', '[']) {
            problems.push(Problem::new(
                "Cargo.toml",
                workspace.header_line,
                format!("tidy expands only `dir/*` member globs, not `{entry}`"),
            ));
        } else {
            members.push(root.join(entry));
        }
    }
    members
}
