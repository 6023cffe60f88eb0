//! `bayesretry inspect`: the contexts of a saved store snapshot.

use core::cmp::Ordering;
use core::time::Duration;

use std::io::Read as _;
use std::path::Path;
use std::time::UNIX_EPOCH;

use bayesretry_beta::Beta;
use bayesretry_store::{Evidence, Snapshot, SnapshotEntry};
use serde::Serialize;

use crate::cli::{InspectArgs, SortKey};
use crate::error::Error;
use crate::format::{Align, Table, num, prob};
use crate::input;
use crate::kind::is_audit_log;
use crate::output::{Output, write_json};

/// The mass of the credible interval shown.
const MASS: f64 = 0.95;

/// Runs `inspect` and writes its table to `out`.
pub(crate) fn run(args: &InspectArgs, out: &mut Output<'_>) -> Result<(), Error> {
    let snapshot = load(&args.store, args.max_bytes)?;
    let mut rows = contexts(&snapshot, args.prior);
    if let Some(endpoint) = &args.endpoint {
        rows.retain(|row| row.endpoint == *endpoint);
    }
    sort(&mut rows, args.sort);
    if args.json {
        return write_json(
            out,
            &InspectJson {
                taken_at_ms: snapshot.taken_at_ms(),
                prior: [args.prior.alpha(), args.prior.beta()],
                contexts: &rows,
            },
        );
    }
    out.text(&render(&snapshot, &rows, args))
}

/// The snapshot at `path`, checked by `bayesretry-fs` (which migrates older
/// formats and tells a truncated file from a syntax error from a wrong shape).
/// A file, standard input (`-`) and anything else that streams (a pipe,
/// `<(...)`, `/dev/stdin`) are read to their end and checked alike. Nothing is
/// opened for saving: a file is read whatever its name, even one too long for
/// a store to save beside. A missing file or a directory is refused first, as
/// missing input.
///
/// At most `limit` bytes are read: a regular file longer than that is refused
/// before it is read, and any other input once it has gone past it (a
/// device such as `/dev/zero` or a pipe never ends), so that memory stays
/// bounded whatever the input.
fn load(path: &Path, limit: u64) -> Result<Snapshot, Error> {
    let input = input::open(Some(path))?;
    input.prompt("inspect", "a snapshot", "STORE.json");
    let too_large = || Error::TooLarge {
        path: input.name.clone(),
        limit,
    };
    if input.regular && std::fs::metadata(path).is_ok_and(|meta| meta.len() > limit) {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    let mut reader = input.reader.take(limit.saturating_add(1));
    reader.read_to_end(&mut bytes).map_err(|error| {
        if input.regular {
            // as the store reports a file it cannot read
            Error::Store(bayesretry_fs::Error::Io {
                op: "read",
                path: path.into(),
                source: error,
            })
        } else {
            Error::Read {
                path: input.name.clone(),
                error,
            }
        }
    })?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    bayesretry_fs::parse_snapshot(&input.name, &bytes).map_err(|error| match error {
        bayesretry_fs::Error::NotJson { .. } | bayesretry_fs::Error::Schema { .. }
            if is_audit_log(&bytes) =>
        {
            Error::Store(bayesretry_fs::Error::Schema {
                path: input.name.clone().into(),
                why: format!(
                    "it is an audit log (JSON Lines of hash-chained entries): check it \
                     with `bayesretry audit verify {}`",
                    path.display()
                ),
            })
        }
        error => Error::Store(error),
    })
}

/// One context of the snapshot, its writers' evidence summed.
#[derive(Debug, Serialize)]
struct Row {
    endpoint: String,
    attempt: u32,
    class: String,
    successes: f64,
    failures: f64,
    alpha: f64,
    beta: f64,
    mean: f64,
    interval_95: [f64; 2],
    strength: f64,
    writers: usize,
    updated_at_ms: u64,
}

#[derive(Serialize)]
struct InspectJson<'a> {
    taken_at_ms: u64,
    prior: [f64; 2],
    contexts: &'a [Row],
}

/// The snapshot's contexts in its own order (endpoint, attempt, class): the
/// entries of one context are adjacent, one per writer.
fn contexts(snapshot: &Snapshot, prior: Beta) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    let mut group: Vec<&SnapshotEntry> = Vec::new();
    for entry in snapshot.entries() {
        let same = group.first().is_some_and(|first| {
            first.endpoint() == entry.endpoint()
                && first.attempt() == entry.attempt()
                && first.class() == entry.class()
        });
        if !same && !group.is_empty() {
            rows.extend(row(&group, prior));
            group.clear();
        }
        group.push(entry);
    }
    rows.extend(row(&group, prior));
    rows
}

/// The row of one context's entries; `None` for no entries.
fn row(entries: &[&SnapshotEntry], prior: Beta) -> Option<Row> {
    let first = entries.first()?;
    let evidence = entries
        .iter()
        .fold(Evidence::new_lenient(0.0, 0.0), |sum, e| {
            sum.plus(e.evidence())
        });
    let posterior = evidence.posterior(prior);
    let (lo, hi) = posterior.credible_interval(MASS);
    Some(Row {
        endpoint: first.endpoint().to_owned(),
        attempt: first.attempt(),
        class: first.class().to_owned(),
        successes: evidence.successes(),
        failures: evidence.failures(),
        alpha: posterior.alpha(),
        beta: posterior.beta(),
        mean: posterior.mean(),
        interval_95: [lo, hi],
        // Evidence and its posterior hold a count past the largest `f64` at
        // that value; their sum, two such counts, would be infinite, which
        // JSON cannot carry (it would be `null`): held there too.
        strength: posterior.strength().min(f64::MAX),
        writers: entries.len(),
        updated_at_ms: entries.iter().map(|e| e.updated_at_ms()).max().unwrap_or(0),
    })
}

/// Sorts `rows` by `key`; ties keep the context order.
fn sort(rows: &mut [Row], key: SortKey) {
    let by_float = |a: f64, b: f64| a.partial_cmp(&b).unwrap_or(Ordering::Equal);
    match key {
        SortKey::Context => {}
        SortKey::Mean => rows.sort_by(|a, b| by_float(a.mean, b.mean)),
        SortKey::Lower => rows.sort_by(|a, b| by_float(a.interval_95[0], b.interval_95[0])),
        SortKey::Strength => rows.sort_by(|a, b| by_float(b.strength, a.strength)),
        SortKey::Updated => rows.sort_by_key(|row| core::cmp::Reverse(row.updated_at_ms)),
    }
}

fn render(snapshot: &Snapshot, rows: &[Row], args: &InspectArgs) -> String {
    let date = unix_date(snapshot.taken_at_ms())
        .map(|date| format!(" ({date})"))
        .unwrap_or_default();
    let mut text = format!(
        "{}: {}, taken at {} ms{date}; prior Beta({}, {})\n",
        if args.store.as_os_str() == "-" {
            String::from(input::STDIN)
        } else {
            args.store.display().to_string()
        },
        match snapshot.len() {
            1 => String::from("1 entry"),
            n => format!("{n} entries"),
        },
        snapshot.taken_at_ms(),
        num(args.prior.alpha()),
        num(args.prior.beta()),
    );
    if rows.is_empty() {
        match &args.endpoint {
            Some(endpoint) => text.push_str(&format!("no context has endpoint {endpoint:?}\n")),
            None => text.push_str("no contexts\n"),
        }
        return text;
    }
    let mut table = Table::new(&[
        ("endpoint", Align::Left),
        ("attempt", Align::Right),
        ("class", Align::Left),
        ("successes", Align::Right),
        ("failures", Align::Right),
        ("mean", Align::Right),
        ("95% interval", Align::Left),
        ("strength", Align::Right),
        ("writers", Align::Right),
        ("last update", Align::Right),
    ]);
    for row in rows {
        table.row(vec![
            printable(&row.endpoint),
            row.attempt.to_string(),
            printable(&row.class),
            num(row.successes),
            num(row.failures),
            prob(row.mean),
            format!(
                "[{}, {}]",
                prob(row.interval_95[0]),
                prob(row.interval_95[1])
            ),
            num(row.strength),
            row.writers.to_string(),
            before_snapshot(snapshot.taken_at_ms(), row.updated_at_ms),
        ]);
    }
    text.push_str(&table.render());
    text
}

/// When a context was last updated, from the snapshot's own time rather than
/// from now: the store's clock need not be the wall clock, and a snapshot file
/// may be old. An update stamped after the snapshot (a writer whose clock runs
/// ahead) says so instead of reading as 0 ms.
fn before_snapshot(taken_at_ms: u64, updated_at_ms: u64) -> String {
    match taken_at_ms.checked_sub(updated_at_ms) {
        Some(age) => format!("{} before snapshot", duration(age)),
        None => format!("{} after snapshot", duration(updated_at_ms - taken_at_ms)),
    }
}

/// `ms` as a UTC date (`Tue, 01 Dec 2026 00:30:24 GMT`) when it reads as
/// milliseconds since the Unix epoch, as the policy's default clock counts, in
/// the years 2000 to 2199; `None` otherwise, since a program may stamp its
/// evidence with a clock of its own origin (an uptime, a virtual clock).
fn unix_date(ms: u64) -> Option<String> {
    /// 2000-01-01T00:00:00Z and 2200-01-01T00:00:00Z, in ms since the epoch.
    const PLAUSIBLE: core::ops::Range<u64> = 946_684_800_000..7_258_118_400_000;
    PLAUSIBLE
        .contains(&ms)
        .then(|| httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_millis(ms)))
}

/// A millisecond span in the largest unit that keeps it readable.
fn duration(ms: u64) -> String {
    const SECOND: u64 = 1_000;
    const MINUTE: u64 = 60 * SECOND;
    const HOUR: u64 = 60 * MINUTE;
    const DAY: u64 = 24 * HOUR;
    let in_unit = |unit: u64| ms as f64 / unit as f64;
    match ms {
        _ if ms < SECOND => format!("{ms} ms"),
        _ if ms < MINUTE => format!("{:.1} s", in_unit(SECOND)),
        _ if ms < HOUR => format!("{:.1} min", in_unit(MINUTE)),
        _ if ms < DAY => format!("{:.1} h", in_unit(HOUR)),
        _ => format!("{:.1} d", in_unit(DAY)),
    }
}

/// `name` as one line of plain text: control characters, quotes and
/// backslashes escaped as Rust writes them (`\n`, `\u{1b}`), so a name from
/// a store cannot break the table's lines or send the terminal escape codes.
/// The JSON output keeps names as they are.
fn printable(name: &str) -> String {
    name.escape_debug().to_string()
}

#[cfg(test)]
mod tests {
    use bayesretry_beta::Beta;
    use bayesretry_store::Snapshot;

    use super::{before_snapshot, contexts, duration, printable, unix_date};

    #[test]
    fn a_name_with_control_characters_prints_on_one_line_without_escape_codes() {
        let shown = printable("weird \"name\"\n\t\u{1b}[31mred");
        assert_eq!(shown, "weird \\\"name\\\"\\n\\t\\u{1b}[31mred");
        assert!(!shown.chars().any(char::is_control));
        assert_eq!(printable("api.example.com"), "api.example.com");
    }

    const TWO_WRITERS: &str = r#"{"version":1,"taken_at_ms":5000,"entries":[
        {"endpoint":"b","attempt":1,"class":"timeout","writer":1,"seq":1,"successes":1,"failures":0,"updated_at_ms":10},
        {"endpoint":"a","attempt":2,"class":"http-503","writer":2,"seq":3,"successes":0,"failures":3,"updated_at_ms":4000},
        {"endpoint":"a","attempt":2,"class":"http-503","writer":1,"seq":2,"successes":2,"failures":1,"updated_at_ms":4900}]}"#;

    #[test]
    fn writers_of_one_context_are_summed() {
        let snapshot = Snapshot::from_json(TWO_WRITERS).unwrap();
        let rows = contexts(&snapshot, Beta::uniform());
        assert_eq!(rows.len(), 2);
        let a = &rows[0];
        assert_eq!((a.endpoint.as_str(), a.attempt), ("a", 2));
        assert_eq!((a.successes, a.failures, a.writers), (2.0, 4.0, 2));
        assert_eq!((a.alpha, a.beta, a.updated_at_ms), (3.0, 5.0, 4900));
        assert_eq!(rows[1].endpoint, "b");
    }

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(duration(950), "950 ms");
        assert_eq!(duration(1_500), "1.5 s");
        assert_eq!(duration(90_000), "1.5 min");
        assert_eq!(duration(2 * 3_600_000), "2.0 h");
    }

    #[test]
    fn an_update_is_timed_from_the_snapshot_either_side_of_it() {
        assert_eq!(before_snapshot(5_000, 4_000), "1.0 s before snapshot");
        assert_eq!(before_snapshot(5_000, 5_000), "0 ms before snapshot");
        assert_eq!(before_snapshot(5_000, 7_000), "2.0 s after snapshot");
        assert_eq!(
            before_snapshot(0, u64::MAX),
            "213503982334.6 d after snapshot"
        );
    }

    #[test]
    fn a_time_reads_as_a_utc_date_only_in_the_years_2000_to_2199() {
        assert_eq!(
            unix_date(1_796_085_024_623).as_deref(),
            Some("Tue, 01 Dec 2026 00:30:24 GMT")
        );
        assert_eq!(
            unix_date(946_684_800_000).as_deref(),
            Some("Sat, 01 Jan 2000 00:00:00 GMT")
        );
        assert_eq!(
            unix_date(7_258_118_399_999).as_deref(),
            Some("Tue, 31 Dec 2199 23:59:59 GMT")
        );
        for not_unix in [0, 5_000, 946_684_799_999, 7_258_118_400_000, u64::MAX] {
            assert_eq!(unix_date(not_unix), None, "{not_unix}");
        }
    }
}
