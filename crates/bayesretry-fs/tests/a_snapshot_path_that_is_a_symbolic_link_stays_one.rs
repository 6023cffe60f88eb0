//! A snapshot path that is a symbolic link (to a file on another volume, or a
//! link a container runtime mounts) is written through, never replaced: a save
//! renames its new file over the file the link finally names, with the
//! temporary files, the backup and the lock beside that file. A chain of links
//! is followed, a dangling link's target is created, and a loop is a typed
//! error, not a hang.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use bayesretry_fs::{Error, FileStore, Source};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore, Snapshot};

type TestResult = Result<(), Box<dyn core::error::Error>>;

/// A store that has seen `successes` successes of one context.
fn store(successes: u32) -> MemoryStore {
    let store = MemoryStore::new();
    for _ in 0..successes {
        store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, 0);
    }
    store
}

fn successes(snapshot: &Snapshot) -> f64 {
    snapshot
        .entries()
        .iter()
        .map(|entry| entry.evidence().successes())
        .sum()
}

/// The successes in the snapshot file at `path`, read without the store.
fn successes_in(path: &Path) -> Result<f64, Box<dyn core::error::Error>> {
    Ok(successes(&Snapshot::from_json(&fs::read_to_string(path)?)?))
}

fn is_link(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|metadata| metadata.file_type().is_symlink())
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Result<Vec<String>, Box<dyn core::error::Error>> {
    let mut names = fs::read_dir(dir)?
        .map(|entry| Ok(entry?.file_name().to_string_lossy().into_owned()))
        .collect::<Result<Vec<_>, std::io::Error>>()?;
    names.sort();
    Ok(names)
}

#[test]
fn saving_through_a_link_keeps_the_link_and_updates_its_target() -> TestResult {
    let links = tempfile::tempdir()?;
    let volume = tempfile::tempdir()?;
    let target = volume.path().join("evidence.json");
    let link = links.path().join("evidence.json");
    symlink(&target, &link)?;
    let file = FileStore::open(&link)?;

    file.save(&store(2).snapshot(0))?;
    file.save(&store(3).snapshot(0))?;
    assert!(is_link(&link), "the link was replaced by a file");
    assert_eq!(fs::read_link(&link)?, target);
    assert_eq!(successes_in(&target)?, 3.0);
    assert_eq!(file.target()?, target);

    // The temporary files, the backup and the lock are all beside the target;
    // beside the link there is only the link.
    assert_eq!(
        names(volume.path())?,
        ["evidence.json", "evidence.json.bak", "evidence.json.lock"]
    );
    assert_eq!(names(links.path())?, ["evidence.json"]);
    assert_eq!(file.backup_path()?, volume.path().join("evidence.json.bak"));
    assert_eq!(file.lock_path()?, volume.path().join("evidence.json.lock"));
    assert_eq!(successes_in(&file.backup_path()?)?, 2.0);
    assert_eq!(successes(&file.load_backup()?), 2.0);

    // A merging save reads and writes through the link too: the file's 3
    // successes and another writer's 4.
    let merged = file.save_merged(&store(4).snapshot(0))?;
    assert_eq!(merged.origin().path(), target);
    assert!(is_link(&link));
    assert_eq!(successes_in(&target)?, 7.0);
    Ok(())
}

#[test]
fn a_store_opened_on_the_target_uses_the_same_lock_and_backup() -> TestResult {
    let dir = tempfile::tempdir()?;
    let target = dir.path().join("data").join("evidence.json");
    fs::create_dir(dir.path().join("data"))?;
    let link = dir.path().join("evidence.json");
    symlink(&target, &link)?;
    let through_link = FileStore::open(&link)?;
    let direct = FileStore::open(&target)?;
    assert_eq!(through_link.lock_path()?, direct.lock_path()?);
    assert_eq!(through_link.backup_path()?, direct.backup_path()?);
    Ok(())
}

#[test]
fn loading_through_a_link_reads_its_target() -> TestResult {
    let dir = tempfile::tempdir()?;
    let target = dir.path().join("real.json");
    let link = dir.path().join("evidence.json");
    FileStore::open(&target)?.save(&store(2).snapshot(0))?;
    symlink(&target, &link)?;

    let file = FileStore::open(&link)?;
    assert_eq!(successes(&file.load()?), 2.0);
    let recovery = file.load_or_recover()?;
    assert_eq!(recovery.source(), Source::Primary);
    assert_eq!(recovery.origin().path(), target);

    // A damaged target is recovered from the backup beside it.
    FileStore::open(&target)?.save(&store(3).snapshot(0))?;
    fs::write(&target, b"{\"version\":1,")?;
    let recovery = file.load_or_recover()?;
    assert_eq!(recovery.source(), Source::Backup);
    assert_eq!(recovery.origin().path(), dir.path().join("real.json.bak"));
    assert_eq!(successes(recovery.snapshot()), 2.0);
    Ok(())
}

#[test]
fn a_chain_of_two_links_is_followed_to_the_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let target = dir.path().join("real.json");
    let middle = dir.path().join("middle.json");
    let link = dir.path().join("evidence.json");
    fs::write(&target, store(1).snapshot(0).to_json())?;
    symlink(&target, &middle)?;
    symlink(&middle, &link)?;

    let file = FileStore::open(&link)?;
    assert_eq!(file.target()?, target);
    file.save(&store(2).snapshot(0))?;
    assert!(is_link(&link) && is_link(&middle));
    assert_eq!(successes_in(&target)?, 2.0);
    assert_eq!(successes_in(&dir.path().join("real.json.bak"))?, 1.0);
    Ok(())
}

#[test]
fn a_relative_link_is_followed_from_its_own_directory() -> TestResult {
    let dir = tempfile::tempdir()?;
    fs::create_dir(dir.path().join("links"))?;
    fs::create_dir(dir.path().join("data"))?;
    let link = dir.path().join("links").join("evidence.json");
    symlink("../data/evidence.json", &link)?;

    let file = FileStore::open(&link)?;
    file.save(&store(1).snapshot(0))?;
    file.save(&store(2).snapshot(0))?;
    assert!(is_link(&link));
    assert_eq!(
        successes_in(&dir.path().join("data").join("evidence.json"))?,
        2.0
    );
    assert_eq!(
        successes_in(&dir.path().join("data").join("evidence.json.bak"))?,
        1.0
    );
    Ok(())
}

#[test]
fn a_dangling_link_has_its_target_created() -> TestResult {
    let dir = tempfile::tempdir()?;
    let target = dir.path().join("not-yet.json");
    let link = dir.path().join("evidence.json");
    symlink(&target, &link)?;

    let file = FileStore::open(&link)?;
    let missing = file.load().err().ok_or("loaded a file that is not there")?;
    assert!(missing.is_missing(), "{missing}");
    assert_eq!(file.load_or_recover()?.source(), Source::Neither);

    file.save(&store(1).snapshot(0))?;
    assert!(is_link(&link));
    assert_eq!(successes_in(&target)?, 1.0);
    Ok(())
}

#[test]
fn a_link_pointed_elsewhere_is_followed_at_the_next_save() -> TestResult {
    let dir = tempfile::tempdir()?;
    let first = dir.path().join("first.json");
    let second = dir.path().join("second.json");
    let link = dir.path().join("evidence.json");
    symlink(&first, &link)?;
    let file = FileStore::open(&link)?;
    file.save(&store(1).snapshot(0))?;

    fs::remove_file(&link)?;
    symlink(&second, &link)?;
    file.save(&store(2).snapshot(0))?;
    assert_eq!(successes_in(&first)?, 1.0);
    assert_eq!(successes_in(&second)?, 2.0);
    assert_eq!(successes(&file.load()?), 2.0);
    Ok(())
}

#[test]
fn a_loop_of_links_is_a_typed_error_and_nothing_is_written() -> TestResult {
    let dir = tempfile::tempdir()?;
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    symlink(&b, &a)?;
    symlink(&a, &b)?;
    let itself = dir.path().join("itself.json");
    symlink(&itself, &itself)?;

    for path in [&a, &itself] {
        let file = FileStore::open(path)?;
        let snapshot = store(1).snapshot(0);
        let errors = [
            file.save(&snapshot).err(),
            file.save_merged(&snapshot).err(),
            file.load().err(),
            file.load_or_recover().err(),
            file.target().err(),
        ];
        for error in errors {
            let error = error.ok_or("a loop of links was followed to a file")?;
            assert!(
                matches!(error, Error::TooManyLinks { limit: 40, .. }),
                "{error:?}"
            );
            assert_eq!(error.path(), Some(path.as_path()));
            let message = error.to_string();
            assert!(
                message.contains(&path.display().to_string()) && message.contains("40"),
                "{message}"
            );
        }
    }
    assert_eq!(names(dir.path())?, ["a.json", "b.json", "itself.json"]);
    assert!(is_link(&a) && is_link(&b) && is_link(&itself));
    Ok(())
}

#[test]
fn a_chain_of_forty_links_is_followed_and_one_more_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let target = dir.path().join("real.json");
    let mut previous = target.clone();
    for n in 1..=41 {
        let link = dir.path().join(format!("link{n}.json"));
        symlink(&previous, &link)?;
        previous = link;
    }
    let forty = FileStore::open(dir.path().join("link40.json"))?;
    forty.save(&store(1).snapshot(0))?;
    assert_eq!(successes_in(&target)?, 1.0);

    let forty_one = FileStore::open(dir.path().join("link41.json"))?;
    let refused = forty_one.save(&store(2).snapshot(0));
    assert!(
        matches!(refused, Err(Error::TooManyLinks { .. })),
        "{refused:?}"
    );
    assert_eq!(successes_in(&target)?, 1.0);
    Ok(())
}
