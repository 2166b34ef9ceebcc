//! A batch: the runs of transfers between two control rows, as one sequence in plan order
//! whose `t`-th transfer is computed when a lane takes it, never stored.
//!
//! The runs of one file follow each other; files take turns, one transfer each, as fio's
//! file_service_type=roundrobin, so transfers in flight fall in different files. Every file
//! of a batch has as many transfers as the others. In random order (fio's randrw), the
//! files take their turns in a seeded random order and each file's transfers come in a
//! seeded random order of their own: every transfer still comes exactly once.

use crate::plan::{Op, Row};
use crate::shuffle::Shuffle;

/// One transfer of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer {
    pub op: Op,
    pub key: u32,
    pub offset: u64,
    pub length: u64,
    pub writer: u32,
}

/// One file's runs, in plan order.
struct File {
    /// (index of the run's first transfer among the file's, the run).
    runs: Vec<(u64, Row)>,
    order: Option<Shuffle>,
}

pub struct Batch {
    files: Vec<File>,
    /// Transfers of each file.
    per_file: u64,
    /// The file of each turn, in random order (a table: it is as long as `files`).
    turns: Option<Vec<u32>>,
}

impl Batch {
    /// The batch of `rows` (transfer rows only); `shuffle`: the seed of a random order.
    pub fn new(rows: &[Row], shuffle: Option<u64>) -> Result<Self, String> {
        let mut files: Vec<File> = Vec::new();
        let mut file_of_key: Vec<u32> = Vec::new();
        let mut totals: Vec<u64> = Vec::new();
        for row in rows.iter().filter(|r| r.count > 0) {
            debug_assert!(row.op.is_transfer());
            let key = row.key as usize;
            if file_of_key.len() <= key {
                file_of_key.resize(key + 1, u32::MAX);
            }
            if file_of_key[key] == u32::MAX {
                file_of_key[key] = files.len() as u32;
                files.push(File { runs: Vec::new(), order: None });
                totals.push(0);
            }
            let f = file_of_key[key] as usize;
            files[f].runs.push((totals[f], *row));
            totals[f] = totals[f].checked_add(row.count).ok_or("plan: more transfers than a file can have")?;
        }
        let per_file = totals.first().copied().unwrap_or(0);
        if totals.iter().any(|&t| t != per_file) {
            return Err(format!(
                "plan: the {} files of one batch of transfers must have as many transfers each, got {} and {}",
                files.len(),
                per_file,
                totals.iter().find(|&&t| t != per_file).unwrap()
            ));
        }
        if files.len() as u64 > u64::MAX / per_file.max(1) {
            return Err("plan: more transfers than one batch can have".into());
        }
        let turns = shuffle.filter(|_| files.len() > 1).map(|seed| {
            let order = Shuffle::new(files.len() as u64, seed);
            (0..files.len() as u64).map(|turn| order.at(turn) as u32).collect()
        });
        if let Some(seed) = shuffle.filter(|_| per_file > 1) {
            for (f, file) in files.iter_mut().enumerate() {
                file.order = Some(Shuffle::new(per_file, seed ^ (f as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
            }
        }
        Ok(Self { files, per_file, turns })
    }

    /// Transfers in the batch.
    pub fn len(&self) -> u64 {
        self.files.len() as u64 * self.per_file
    }

    /// Files the batch's transfers take turns in.
    pub fn files(&self) -> u64 {
        self.files.len() as u64
    }

    /// The longest transfer.
    pub fn max_length(&self) -> u64 {
        self.files.iter().flat_map(|f| f.runs.iter()).map(|(_, r)| r.length).max().unwrap_or(0)
    }

    /// The `t`-th transfer in plan order (t < len()).
    #[inline]
    pub fn transfer(&self, t: u64) -> Transfer {
        let files = self.files.len() as u64;
        let (turn, step) = if files == 1 { (0, t) } else { (t % files, t / files) };
        let file = &self.files[self.turns.as_ref().map_or(turn as usize, |files| files[turn as usize] as usize)];
        let i = file.order.as_ref().map_or(step, |s| s.at(step));
        let run = match file.runs.len() {
            1 => 0,
            _ => file.runs.partition_point(|(first, _)| *first <= i) - 1,
        };
        let (first, row) = &file.runs[run];
        Transfer {
            op: row.op,
            key: row.key,
            offset: row.offset + (i - first) * row.stride,
            length: row.length,
            writer: row.writer,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(key: u32, offset: u64, count: u64, writer: u32) -> Row {
        Row { op: Op::Write, key, offset, length: 4096, count, stride: 4096, writer }
    }

    fn all(batch: &Batch) -> Vec<(u32, u64, u32)> {
        (0..batch.len()).map(|t| batch.transfer(t)).map(|x| (x.key, x.offset / 4096, x.writer)).collect()
    }

    #[test]
    fn a_files_runs_follow_each_other() {
        // sfmr: one file, a run per block whose writer changes; segments of sfmw alike.
        let batch = Batch::new(&[run(0, 0, 2, 0), run(0, 8192, 2, 1), run(0, 40960, 1, 0)], None).unwrap();
        assert_eq!(all(&batch), vec![(0, 0, 0), (0, 1, 0), (0, 2, 1), (0, 3, 1), (0, 10, 0)]);
        assert_eq!(batch.files(), 1);
    }

    #[test]
    fn files_take_turns_one_transfer_each() {
        let batch = Batch::new(&[run(3, 0, 3, 0), run(1, 0, 3, 0)], None).unwrap();
        assert_eq!(all(&batch), vec![(3, 0, 0), (1, 0, 0), (3, 1, 0), (1, 1, 0), (3, 2, 0), (1, 2, 0)]);
    }

    #[test]
    fn random_order_visits_every_transfer_once_with_files_still_taking_turns() {
        let rows: Vec<Row> = (0..4).map(|k| run(k, 0, 64, 0)).collect();
        let batch = Batch::new(&rows, Some(11)).unwrap();
        let seen = all(&batch);
        for window in seen.chunks(4) {
            let mut keys: Vec<u32> = window.iter().map(|x| x.0).collect();
            keys.sort_unstable();
            assert_eq!(keys, vec![0, 1, 2, 3]);
        }
        let mut sorted = seen.clone();
        sorted.sort_unstable();
        let mut expected: Vec<_> = (0..4).flat_map(|k| (0..64).map(move |o| (k, o, 0))).collect();
        expected.sort_unstable();
        assert_eq!(sorted, expected);
        assert_ne!(seen, all(&Batch::new(&rows, None).unwrap()));
        assert_eq!(seen, all(&Batch::new(&rows, Some(11)).unwrap()));
        assert_ne!(seen, all(&Batch::new(&rows, Some(12)).unwrap()));
        // Each file in an order of its own.
        let of = |k| seen.iter().filter(|x| x.0 == k).map(|x| x.1).collect::<Vec<_>>();
        assert_ne!(of(0), of(1));
    }

    #[test]
    fn a_random_order_spans_runs_of_a_file() {
        let batch = Batch::new(&[run(0, 0, 3, 0), run(0, 40960, 3, 1)], Some(5)).unwrap();
        let mut seen = all(&batch);
        seen.sort_unstable();
        assert_eq!(seen, vec![(0, 0, 0), (0, 1, 0), (0, 2, 0), (0, 10, 1), (0, 11, 1), (0, 12, 1)]);
    }

    #[test]
    fn a_batch_of_256_gib_of_4_kib_transfers_is_one_run() {
        let count = (256u64 << 30) / 4096;
        let batch = Batch::new(&[run(0, 0, count, 0)], Some(1)).unwrap();
        assert_eq!(batch.len(), count);
        assert!(batch.transfer(count - 1).offset < 256 << 30);
    }

    #[test]
    fn files_of_unequal_transfer_counts_are_refused() {
        let err = Batch::new(&[run(0, 0, 3, 0), run(1, 0, 2, 0)], None).err().unwrap();
        assert!(err.contains("as many transfers each"), "{err}");
    }
}
