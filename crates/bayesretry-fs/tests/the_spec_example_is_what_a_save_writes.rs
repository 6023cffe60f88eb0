//! The example in `docs/SPEC.md` (section 10, "Snapshot file") is byte for byte what a
//! save of that snapshot writes, and the number spellings the spec lists are
//! the ones a save uses: the spec describes the writer, not an idealised one.

use std::fs;
use std::path::PathBuf;

use bayesretry_fs::FileStore;
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore, Snapshot};

type TestResult = Result<(), Box<dyn core::error::Error>>;

/// The first `json` block of the spec's "Snapshot file" section (numbered
/// `## 10. Snapshot file` or not).
fn spec_example() -> Result<String, Box<dyn core::error::Error>> {
    let spec = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/SPEC.md");
    let text = fs::read_to_string(spec)?;
    let start = text
        .lines()
        .position(|line| line.starts_with("## ") && line.ends_with(" Snapshot file"))
        .ok_or("no `## … Snapshot file` section")?;
    let section = text.lines().skip(start + 1).collect::<Vec<_>>().join("\n");
    let block = section
        .split("```json\n")
        .nth(1)
        .ok_or("no json block in the section")?;
    let example = block.split("\n```").next().ok_or("unclosed json block")?;
    Ok(example.to_owned())
}

#[test]
fn a_save_of_the_spec_example_writes_exactly_its_bytes_and_a_line_feed() -> TestResult {
    let example = spec_example()?;
    let snapshot = Snapshot::from_json(&example)?;
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    file.save(&snapshot)?;
    assert_eq!(fs::read_to_string(file.path())?, format!("{example}\n"));
    Ok(())
}

#[test]
fn the_spec_example_reads_as_the_spec_says() -> TestResult {
    let snapshot = Snapshot::from_json(&spec_example()?)?;
    let store = MemoryStore::new();
    store.load(&snapshot);
    let ctx = Context::new("api.example.com", 1, ErrorClass::Http(429));
    let evidence = store.evidence(&ctx, 5_000);
    assert_eq!((evidence.successes(), evidence.failures()), (9.5, 5.0));
    assert_eq!(snapshot.entries()[3].endpoint(), "zürich.example.com");
    assert_eq!(snapshot.entries()[3].class(), "custom:quota \"daily\"");
    Ok(())
}

#[test]
fn counts_are_written_in_the_spellings_the_spec_lists() -> TestResult {
    for (value, spelling) in [
        (2.0, "2.0"),
        (9.5, "9.5"),
        (0.25, "0.25"),
        (1e-7, "1e-7"),
        (1.5e20, "1.5e+20"),
    ] {
        let json = format!(
            "{{\"version\":1,\"taken_at_ms\":0,\"entries\":[{{\"endpoint\":\"a\",\"attempt\":1,\
             \"class\":\"timeout\",\"writer\":1,\"seq\":1,\"successes\":{value:e},\"failures\":0,\
             \"updated_at_ms\":0}}]}}"
        );
        let written = Snapshot::from_json(&json)?.to_json();
        assert!(
            written.contains(&format!("\"successes\":{spelling},")),
            "{value}: {written}"
        );
        let read = Snapshot::from_json(&written)?;
        assert_eq!(
            read.entries()[0].evidence().successes().to_bits(),
            f64::to_bits(value)
        );
    }
    Ok(())
}

#[test]
fn control_characters_and_non_ascii_are_written_as_the_spec_says() -> TestResult {
    let store = MemoryStore::new();
    let endpoint = "tab\there\u{1}é\"\\";
    store.observe(&Context::new(endpoint, 1, ErrorClass::Timeout), true, 0);
    let json = store.snapshot(0).to_json();
    assert!(
        json.contains(r#""endpoint":"tab\there\u0001é\"\\""#),
        "{json}"
    );
    Ok(())
}
