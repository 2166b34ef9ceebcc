//! Which in-flight lane runs which transfer: each lane owns a share of the rows and takes
//! them in plan order; a lane with nothing left takes from the others, so none idles while
//! work remains.
//!
//! When a call touches at least as many files as there are lanes, a file's rows all belong to one lane (fio gives
//! each job its own file): lanes never write the same file at once, which on a local file
//! system would serialise them on the file's lock. Otherwise rows are dealt round robin.
//! Each lane takes from its own counter, on a cache line of its own; one counter shared by
//! all lanes bounced between cores on every 4 KiB transfer.

use crate::plan::Row;
use std::sync::atomic::{AtomicUsize, Ordering};

#[repr(align(128))]
struct Cursor(AtomicUsize);

pub struct Lanes {
    /// Row indices of each lane, in plan order.
    owned: Vec<Vec<usize>>,
    cursors: Vec<Cursor>,
}

/// Where a lane is looking for rows: its own share first (0), then the next lanes' in turn.
#[derive(Default)]
pub struct Search {
    ahead: usize,
}

impl Lanes {
    pub fn new(rows: &[Row], lanes: usize) -> Self {
        let lanes = lanes.max(1);
        let files = files_in_order(rows);
        let by_file = files.iter().filter(|f| **f != UNSEEN).count() >= lanes;
        let mut owned = vec![Vec::with_capacity(rows.len() / lanes + 1); lanes];
        for (i, row) in rows.iter().enumerate() {
            let lane = if by_file { files[row.key as usize] as usize % lanes } else { i % lanes };
            owned[lane].push(i);
        }
        let cursors = (0..lanes).map(|_| Cursor(AtomicUsize::new(0))).collect();
        Self { owned, cursors }
    }

    /// The next row for `lane` to run, or None when every row has been taken.
    pub fn next(&self, lane: usize, search: &mut Search) -> Option<usize> {
        let lanes = self.owned.len();
        while search.ahead < lanes {
            let from = (lane + search.ahead) % lanes;
            let taken = self.cursors[from].0.fetch_add(1, Ordering::Relaxed);
            if let Some(&i) = self.owned[from].get(taken) {
                return Some(i);
            }
            search.ahead += 1;
        }
        None
    }

    /// The next row of `lane`'s own share, going round it forever (time-based phases).
    pub fn again(&self, lane: usize) -> Option<usize> {
        let own = &self.owned[lane];
        let taken = self.cursors[lane].0.fetch_add(1, Ordering::Relaxed);
        (!own.is_empty()).then(|| own[taken % own.len()])
    }
}

const UNSEEN: u32 = u32::MAX;

/// For each key, its place among the keys the rows touch, in order of first touch (UNSEEN
/// for keys they do not): files are dealt to lanes by this, so every lane gets its share
/// whatever the key numbers are.
fn files_in_order(rows: &[Row]) -> Vec<u32> {
    let mut place = vec![UNSEEN; rows.iter().map(|r| r.key as usize + 1).max().unwrap_or(0)];
    let mut next = 0;
    for row in rows {
        if place[row.key as usize] == UNSEEN {
            place[row.key as usize] = next;
            next += 1;
        }
    }
    place
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Op;

    fn rows(keys: &[u32]) -> Vec<Row> {
        keys.iter()
            .enumerate()
            .map(|(i, &key)| Row { op: Op::Write, key, offset: i as u64 * 4096, length: 4096, writer: 0 })
            .collect()
    }

    fn drain(lanes: &Lanes, lane: usize) -> Vec<usize> {
        let mut search = Search::default();
        std::iter::from_fn(|| lanes.next(lane, &mut search)).collect()
    }

    #[test]
    fn a_files_rows_stay_on_one_lane_in_plan_order() {
        let plan = rows(&[0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
        let lanes = Lanes::new(&plan, 2);
        assert_eq!(lanes.owned, vec![vec![0, 2, 4, 6, 8], vec![1, 3, 5, 7, 9]]);
        let lanes = Lanes::new(&plan, 4);
        assert_eq!(lanes.owned[1], vec![1, 5, 9]);
        // Key numbers that all fall on one lane by value are still dealt one per lane.
        let lanes = Lanes::new(&rows(&[0, 4, 8, 12, 0, 4, 8, 12]), 4);
        assert_eq!(lanes.owned, vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]);
    }

    #[test]
    fn fewer_files_than_lanes_deal_rows_round_robin() {
        let lanes = Lanes::new(&rows(&[0, 5, 0, 5, 0, 5, 0]), 3);
        assert_eq!(lanes.owned, vec![vec![0, 3, 6], vec![1, 4], vec![2, 5]]);
    }

    #[test]
    fn an_idle_lane_takes_the_others_rows_and_every_row_runs_once() {
        let lanes = Lanes::new(&rows(&[0, 1, 0, 1, 0, 1]), 2);
        assert_eq!(drain(&lanes, 1), vec![1, 3, 5, 0, 2, 4]);
        assert_eq!(drain(&lanes, 0), Vec::<usize>::new());

        let lanes = Lanes::new(&rows(&[0, 1, 0, 1, 0]), 2);
        let round: Vec<_> = (0..7).filter_map(|_| lanes.again(1)).collect();
        assert_eq!(round, vec![1, 3, 1, 3, 1, 3, 1]);

        let lanes = Lanes::new(&rows(&[0; 1000]), 8);
        let taken = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for lane in 0..8 {
                let (lanes, taken) = (&lanes, &taken);
                scope.spawn(move || {
                    let mine = drain(lanes, lane);
                    taken.lock().unwrap().extend(mine);
                });
            }
        });
        let mut taken = taken.into_inner().unwrap();
        taken.sort_unstable();
        assert_eq!(taken, (0..1000).collect::<Vec<_>>());
    }
}
