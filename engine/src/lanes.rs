//! Which in-flight lane runs which transfer of a batch: each lane owns a share of the
//! transfers and takes them in plan order; a lane with nothing left takes from the others,
//! so none idles while work remains. Shares are arithmetic on transfer indices, not lists:
//! a lane's k-th transfer is computed, so lanes cost the same for any number of transfers.
//!
//! When a batch has at least as many files as there are lanes, a file's transfers all belong
//! to one lane (fio gives each job its own file): lanes never write the same file at once,
//! which on a local file system would serialise them on the file's lock. Files are dealt to
//! lanes by their turn in the batch (their order of first touch), so every lane gets its
//! share whatever the key numbers are. Otherwise transfers are dealt round robin.
//! Each lane takes from its own counter, on a cache line of its own; one counter shared by
//! all lanes bounced between cores on every 4 KiB transfer.

use std::sync::atomic::{AtomicU64, Ordering};

#[repr(align(128))]
struct Cursor(AtomicU64);

pub struct Lanes {
    transfers: u64,
    /// Files the transfers take turns in (batch.rs): transfer t is in the file of turn t % files.
    files: u64,
    by_file: bool,
    cursors: Vec<Cursor>,
}

/// Where a lane is looking for transfers: its own share first (0), then the next lanes' in turn.
#[derive(Default)]
pub struct Search {
    ahead: usize,
}

impl Lanes {
    /// `lanes` lanes over `transfers` transfers that take turns in `files` files.
    pub fn new(transfers: u64, files: u64, lanes: usize) -> Self {
        let lanes = lanes.max(1);
        let files = files.max(1);
        let cursors = (0..lanes).map(|_| Cursor(AtomicU64::new(0))).collect();
        Self { transfers, files, by_file: files >= lanes as u64, cursors }
    }

    fn lanes(&self) -> u64 {
        self.cursors.len() as u64
    }

    /// How many transfers `lane` owns.
    fn share(&self, lane: u64) -> u64 {
        let lanes = self.lanes();
        if self.by_file {
            let files = (self.files - lane).div_ceil(lanes);
            files * (self.transfers / self.files)
        } else {
            self.transfers.saturating_sub(lane).div_ceil(lanes)
        }
    }

    /// The `k`-th transfer of `lane`'s share (k < share(lane)).
    fn nth(&self, lane: u64, k: u64) -> u64 {
        let lanes = self.lanes();
        if self.by_file {
            let files = (self.files - lane).div_ceil(lanes);
            let (step, own_file) = (k / files, k % files);
            step * self.files + lane + own_file * lanes
        } else {
            lane + k * lanes
        }
    }

    /// The next transfer for `lane` to run, or None when every transfer has been taken.
    pub fn next(&self, lane: usize, search: &mut Search) -> Option<u64> {
        let lanes = self.cursors.len();
        while search.ahead < lanes {
            let from = (lane + search.ahead) % lanes;
            let taken = self.cursors[from].0.fetch_add(1, Ordering::Relaxed);
            if taken < self.share(from as u64) {
                return Some(self.nth(from as u64, taken));
            }
            search.ahead += 1;
        }
        None
    }

    /// The next transfer of `lane`'s own share, going round it forever (time-based phases).
    pub fn again(&self, lane: usize) -> Option<u64> {
        let share = self.share(lane as u64);
        let taken = self.cursors[lane].0.fetch_add(1, Ordering::Relaxed);
        (share > 0).then(|| self.nth(lane as u64, taken % share))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(lanes: &Lanes) -> Vec<Vec<u64>> {
        (0..lanes.lanes()).map(|l| (0..lanes.share(l)).map(|k| lanes.nth(l, k)).collect()).collect()
    }

    fn drain(lanes: &Lanes, lane: usize) -> Vec<u64> {
        let mut search = Search::default();
        std::iter::from_fn(|| lanes.next(lane, &mut search)).collect()
    }

    #[test]
    fn a_files_transfers_stay_on_one_lane_in_plan_order() {
        // Four files taking turns (t % 4 is the file's turn), ten transfers: 0 1 2 3 0 1 2 3 ...
        let lanes = Lanes::new(12, 4, 2);
        assert_eq!(owned(&lanes), vec![vec![0, 2, 4, 6, 8, 10], vec![1, 3, 5, 7, 9, 11]]);
        let lanes = Lanes::new(12, 4, 4);
        assert_eq!(owned(&lanes)[1], vec![1, 5, 9]);
        // Five files on two lanes: lane 0 has three files and goes round them in turn.
        let lanes = Lanes::new(10, 5, 2);
        assert_eq!(owned(&lanes), vec![vec![0, 2, 4, 5, 7, 9], vec![1, 3, 6, 8]]);
    }

    #[test]
    fn fewer_files_than_lanes_deal_transfers_round_robin() {
        let lanes = Lanes::new(7, 2, 3);
        assert_eq!(owned(&lanes), vec![vec![0, 3, 6], vec![1, 4], vec![2, 5]]);
        let lanes = Lanes::new(2, 1, 8);
        assert_eq!(owned(&lanes)[..3], [vec![0], vec![1], vec![]]);
    }

    #[test]
    fn an_idle_lane_takes_the_others_transfers_and_every_transfer_runs_once() {
        let lanes = Lanes::new(6, 2, 2);
        assert_eq!(drain(&lanes, 1), vec![1, 3, 5, 0, 2, 4]);
        assert_eq!(drain(&lanes, 0), Vec::<u64>::new());

        let lanes = Lanes::new(5, 1, 2);
        let round: Vec<_> = (0..7).filter_map(|_| lanes.again(1)).collect();
        assert_eq!(round, vec![1, 3, 1, 3, 1, 3, 1]);

        for (transfers, files) in [(1000, 1), (1000, 10), (999, 3)] {
            let lanes = Lanes::new(transfers, files, 8);
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
            assert_eq!(taken, (0..transfers).collect::<Vec<_>>());
        }
    }

    #[test]
    fn lanes_cost_nothing_per_transfer() {
        let lanes = Lanes::new(1 << 36, 1, 32);
        assert_eq!(lanes.share(31), (1 << 36) / 32);
        assert_eq!(lanes.nth(31, (1 << 36) / 32 - 1), (1 << 36) - 1);
    }
}
