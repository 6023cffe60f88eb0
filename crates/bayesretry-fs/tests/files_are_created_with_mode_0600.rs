//! Every file the store creates — the snapshot, its backup, the lock file and
//! the temporary files — is readable and writable by its owner only.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use bayesretry_fs::FileStore;
use bayesretry_store::{Context, ErrorClass, PosteriorStore, StoreConfig};

type TestResult = Result<(), Box<dyn core::error::Error>>;

fn mode(path: &Path) -> Result<u32, std::io::Error> {
    Ok(fs::metadata(path)?.permissions().mode() & 0o777)
}

#[test]
fn the_file_its_backup_and_the_lock_are_0600() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    let store = StoreConfig::new().build()?;
    for now in 0..2 {
        store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, now);
        file.save(&store.snapshot(now))?;
    }
    file.save_merged(&store.snapshot(2))?;
    for path in [
        file.path().to_path_buf(),
        file.backup_path()?,
        file.lock_path()?,
    ] {
        assert_eq!(mode(&path)?, 0o600, "{}", path.display());
    }
    Ok(())
}

#[test]
fn a_leftover_temporary_file_with_a_wider_mode_is_replaced_not_reused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let temp = dir.path().join("evidence.json.tmp");
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&temp)?;
    fs::set_permissions(&temp, fs::Permissions::from_mode(0o666))?;
    let file = FileStore::open(&path)?;
    file.save(&StoreConfig::new().build()?.snapshot(0))?;
    assert_eq!(mode(&path)?, 0o600);
    assert!(!temp.exists(), "the temporary file was renamed into place");
    Ok(())
}

#[test]
fn a_file_made_world_readable_does_not_make_its_backup_world_readable() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    let store = StoreConfig::new().build()?;
    store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, 0);
    file.save(&store.snapshot(0))?;
    fs::set_permissions(file.path(), fs::Permissions::from_mode(0o644))?;
    let widened = fs::read(file.path())?;

    store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, 1);
    file.save(&store.snapshot(1))?;
    assert_eq!(mode(&file.backup_path()?)?, 0o600);
    assert_eq!(
        fs::read(file.backup_path()?)?,
        widened,
        "the backup is the old file"
    );
    assert_eq!(mode(file.path())?, 0o600);

    // A merging save rotates the same way.
    fs::set_permissions(file.path(), fs::Permissions::from_mode(0o664))?;
    file.save_merged(&store.snapshot(2))?;
    assert_eq!(mode(&file.backup_path()?)?, 0o600);
    assert_eq!(mode(file.path())?, 0o600);
    Ok(())
}
