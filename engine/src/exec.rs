//! The Executor: runs one rank's plans with a bounded number of transfers in flight (one lane
//! per transfer in flight, each with its own buffer) and records what they did in `Figures`.
//!
//! An `Executor` lives for one phase of one rank. Open handles survive between `run` calls,
//! so a phase can be fed in chunks (collect-and-write) and still open and close once.

use crate::batch::{Batch, Transfer};
use crate::buffer::AlignedBuf;
use crate::cancel;
use crate::clock::now_ns;
use crate::figures::Figures;
use crate::first_byte::FirstByteTimes;
use crate::lanes::{Lanes, Search};
use crate::payload::{key_hash, stream_of, Held, Mismatch, Payload};
use crate::plan::{Op, Plan, Row};
use crate::requests::Snapshot;
use crate::target::{Handle, Mode, Receipt, Target, Upload, WriteHint};
use crate::trace::{LaneRows, Trace, Traced, COMMIT, CREATE};
use bytes::{Bytes, BytesMut};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Where the bytes of transfers come from or go to.
pub enum Data<'a> {
    /// Generated from the payload on write; checked against it on read when verifying.
    Payload,
    /// Written from this buffer, consumed in plan order (collect-and-write).
    Source(&'a [u8]),
    /// Read into this buffer, filled in plan order (read-and-scatter).
    Sink(&'a mut [u8]),
}

pub struct Executor {
    target: Arc<dyn Target>,
    payload: Payload,
    t0_ns: u64,
    in_flight: usize,
    verify: bool,
    direct: bool,
    handles: HashMap<String, Arc<Handle>>,
    /// Read handles of keys also open for writing (a mixed phase reads and writes one file).
    readers: HashMap<String, Arc<Handle>>,
    /// Write hints set by the caller for keys whose writes come in later calls (sfsw chunks).
    expected: HashMap<String, WriteHint>,
    /// Receipts of shared uploads this rank closed, for the rank that completes them.
    receipts: HashMap<String, Vec<Receipt>>,
    /// The part size of each shared upload this rank joined, for its completion.
    shared_part_bytes: HashMap<String, u64>,
    /// The id of each shared upload this rank began and has neither completed nor aborted:
    /// an interrupt that lands between begin_shared's return and the caller keeping the id
    /// must still find it to abort.
    begun_shared: HashMap<String, String>,
    buffers: Vec<LaneBuffer>,
    /// Request bodies for targets that take them (`Target::takes_bodies`), one per lane.
    bodies: Mutex<Vec<Body>>,
    failed: bool,
    requests_at_start: Snapshot,
    first_bytes_at_start: FirstByteTimes,
    figures: Figures,
    /// Every operation, when tracing (--trace); None costs nothing per operation.
    trace: Option<Trace>,
}

struct Shared<'a> {
    target: &'a dyn Target,
    payload: &'a Payload,
    t0_ns: u64,
    verify: bool,
    direct: bool,
    keys: &'a [String],
    /// Each key's name hashed once per call, not once per transfer.
    key_hashes: Vec<u64>,
    handles: &'a [Option<Arc<Handle>>],
    readers: &'a [Option<Arc<Handle>>],
    stop: &'a AtomicBool,
    bodies: &'a Mutex<Vec<Body>>,
    tracing: bool,
    /// Transfers per lane in the batch (a traced lane's rows are reserved for them).
    share: usize,
    /// Rows each lane may keep (its part of what the trace has room for).
    trace_room: usize,
}

/// A lane's aligned buffer, and what it holds of the payload (so a refill may only re-stamp).
struct LaneBuffer {
    buf: AlignedBuf,
    held: Held,
}

impl LaneBuffer {
    fn new(bytes: usize) -> Self {
        Self { buf: AlignedBuf::new(bytes), held: Held::default() }
    }

    /// The first `len` bytes, to be overwritten with something other than the payload.
    fn scratch(&mut self, len: usize) -> &mut [u8] {
        self.held = Held::default();
        self.buf.as_mut_slice(len)
    }
}

/// A request body a lane hands to the target and gets back when the target lets go of it.
struct Body {
    bytes: BytesMut,
    held: Held,
}

impl Executor {
    pub fn new(
        target: Arc<dyn Target>,
        seed: u64,
        t0_ns: u64,
        in_flight: usize,
        verify: bool,
        direct: bool,
    ) -> Self {
        Self {
            target: target.clone(),
            payload: Payload::new(seed),
            t0_ns,
            in_flight: in_flight.max(1),
            verify,
            direct,
            requests_at_start: target.counters().snapshot(),
            first_bytes_at_start: target.counters().first_bytes.snapshot(),
            handles: HashMap::new(),
            readers: HashMap::new(),
            expected: HashMap::new(),
            receipts: HashMap::new(),
            shared_part_bytes: HashMap::new(),
            begun_shared: HashMap::new(),
            buffers: Vec::new(),
            bodies: Mutex::new(Vec::new()),
            failed: false,
            figures: Figures::default(),
            trace: None,
        }
    }

    /// Record every operation from now on, up to `limit` of them (see `take_trace`).
    pub fn trace(&mut self, limit: usize) {
        self.trace.get_or_insert_with(|| Trace::with_limit(limit));
    }

    /// The operations traced so far (None when not tracing), leaving the trace empty.
    pub fn take_trace(&mut self) -> Option<Trace> {
        self.trace.as_mut().map(Trace::take)
    }

    fn traced(&mut self, op: u8, key: &str, start: u64, end: u64) {
        if let Some(trace) = self.trace.as_mut() {
            trace.push(op, key, -1, 0, start, end);
        }
    }

    /// Allocate and touch `in_flight` buffers of `bytes` now, so page faults on fresh buffers
    /// fall before the phase's clock starts (as fio allocates before it times).
    pub fn reserve(&mut self, bytes: usize) {
        if self.target.takes_bodies() {
            let bodies = self.bodies.get_mut().unwrap();
            while bodies.len() < self.in_flight {
                let mut body = BytesMut::zeroed(bytes);
                body.fill(0xA5);
                bodies.push(Body { bytes: body, held: Held::default() });
            }
            return;
        }
        while self.buffers.len() < self.in_flight {
            let mut lane = LaneBuffer::new(bytes);
            let len = lane.buf.len();
            lane.scratch(len).fill(0xA5);
            self.buffers.push(lane);
        }
    }

    /// Times from now on are relative to `t0_ns` (taken right after the phase barrier).
    pub fn start(&mut self, t0_ns: u64) {
        self.t0_ns = t0_ns;
        self.requests_at_start = self.target.counters().snapshot();
        self.first_bytes_at_start = self.target.counters().first_bytes.snapshot();
    }

    /// Requests this executor's phase issued, by kind, with throttled and retried counts.
    pub fn requests(&self) -> Snapshot {
        self.target.counters().snapshot().since(&self.requests_at_start)
    }

    /// Everything run so far, with the requests the target issued since `start` and their
    /// times to first byte.
    pub fn figures(&self) -> Figures {
        let first_bytes = self.target.counters().first_bytes.snapshot().since(&self.first_bytes_at_start);
        Figures { requests: self.requests(), first_bytes, ..self.figures.clone() }
    }

    /// Whether an error is in the figures (cheaper than cloning them to look).
    pub fn errors(&self) -> u64 {
        self.figures.errors
    }

    /// The next open of `key` for writing will be followed by `writes` writes of `part_bytes`.
    pub fn expect(&mut self, key: &str, writes: u64, part_bytes: u64) {
        self.expected.insert(key.to_string(), WriteHint { writes, part_bytes });
    }

    /// Start a shared upload of `key` (timed as an open); its id goes to the other ranks.
    pub fn begin_shared(&mut self, key: &str, part_bytes: u64) -> Result<String, String> {
        let start = now_ns();
        let outcome = self.target.begin_shared(key);
        let end = now_ns();
        self.figures.opened(self.since_t0(start), self.since_t0(end));
        self.traced(CREATE, key, start, end);
        let id = outcome.map_err(|e| self.fail(format!("start shared upload {key}: {e}")))?;
        self.begun_shared.insert(key.to_string(), id.clone());
        self.join_shared(key, &id, part_bytes);
        Ok(id)
    }

    /// Add parts to the shared upload `id` of `key` from this rank.
    pub fn join_shared(&mut self, key: &str, id: &str, part_bytes: u64) {
        let upload = Upload { id: id.to_string(), part_bytes: part_bytes.max(1), receipts: Default::default() };
        self.shared_part_bytes.insert(key.to_string(), upload.part_bytes);
        let handle = Handle::Multipart { key: key.to_string(), upload: Arc::new(upload), shared: true };
        self.handles.insert(key.to_string(), Arc::new(handle));
    }

    /// The receipts of the parts this rank put into the shared upload of `key`.
    pub fn take_receipts(&mut self, key: &str) -> Vec<Receipt> {
        self.receipts.remove(key).unwrap_or_default()
    }

    /// Complete a shared upload from every rank's receipts (timed as a close).
    pub fn finish_shared(&mut self, key: &str, id: &str, receipts: Vec<Receipt>) -> Result<(), String> {
        let start = now_ns();
        let part_bytes = self.shared_part_bytes.remove(key).unwrap_or(0);
        let outcome = self.target.finish_shared(key, id, receipts, part_bytes);
        let end = now_ns();
        self.figures.closed(self.since_t0(start), self.since_t0(end));
        self.traced(COMMIT, key, start, end);
        if outcome.is_ok() {
            self.begun_shared.remove(key);
        }
        outcome.map_err(|e| self.fail(format!("complete shared upload {key}: {e}")))
    }

    /// Abort the shared upload of `key` this rank began, if it is still open, after a failure
    /// or an interrupt anywhere (untimed; the phase has failed).
    pub fn abort_shared(&mut self, key: &str) -> Result<(), String> {
        self.handles.remove(key);
        self.shared_part_bytes.remove(key);
        let Some(id) = self.begun_shared.remove(key) else {
            return Ok(());
        };
        self.target.abort_shared(key, &id).map_err(|e| format!("abort shared upload {key}: {e}"))
    }

    fn fail(&mut self, message: String) -> String {
        self.figures.error(message.clone());
        self.failed = true;
        message
    }

    /// Give up every open handle after a failure: uploads this rank owns are aborted.
    fn abandon_all(&mut self) {
        let readers: Vec<_> = self.readers.drain().collect();
        for (_, handle) in self.handles.drain().chain(readers) {
            if let Ok(handle) = Arc::try_unwrap(handle) {
                self.target.abandon(handle);
            }
        }
    }

    fn since_t0(&self, t: u64) -> u64 {
        t.saturating_sub(self.t0_ns)
    }

    /// Run every row of `plan`. After an I/O error the rest of the phase is skipped and
    /// the handles are closed untimed; the error is in the figures.
    ///
    /// With `until` (ns on `now_ns`'s clock; payload data only), fio's time_based: each lane
    /// goes round its own share of every batch of transfers again and again, and stops after
    /// the transfer that ends at or past `until`.
    pub fn run(&mut self, plan: &Plan, mut data: Data, until: Option<u64>) {
        let hints = write_hints(plan);
        let mut i = 0;
        while i < plan.rows.len() && !self.failed && !cancel::requested() {
            let row = plan.rows[i];
            if row.op.is_transfer() {
                let end = plan.rows[i..]
                    .iter()
                    .position(|r| !r.op.is_transfer())
                    .map_or(plan.rows.len(), |p| i + p);
                match Batch::new(&plan.rows[i..end], plan.shuffle) {
                    Ok(batch) => self.transfers(plan, &batch, &mut data, until),
                    Err(e) => {
                        self.fail(e);
                    }
                }
                i = end;
            } else {
                self.control(plan, row, &hints);
                i += 1;
            }
        }
        if self.failed || cancel::requested() {
            self.abandon_all();
        }
    }

    fn control(&mut self, plan: &Plan, row: Row, hints: &[WriteHint]) {
        let key = &plan.keys[row.key as usize];
        let start = now_ns();
        let outcome = match row.op {
            Op::OpenWrite if self.handles.contains_key(key) => Ok(()), // joined a shared upload
            // Opened for writing too: a mixed phase reads through a handle of its own.
            Op::OpenRead if self.handles.contains_key(key) => {
                self.target.open(key, Mode::Read, WriteHint::default()).map(|h| {
                    self.readers.insert(key.clone(), Arc::new(h));
                })
            }
            Op::OpenWrite | Op::OpenRead => {
                let mode = if row.op == Op::OpenWrite { Mode::Write } else { Mode::Read };
                let hint = self.expected.remove(key).unwrap_or(hints[row.key as usize]);
                self.target.open(key, mode, hint).map(|h| {
                    self.handles.insert(key.clone(), Arc::new(h));
                })
            }
            Op::Sync => match self.handles.get(key) {
                Some(h) => self.target.sync(h),
                None => Err(not_open(key)),
            },
            Op::Close => match self.close_reader(key).and(self.handles.remove(key).ok_or_else(|| not_open(key))) {
                Ok(h) => match Arc::try_unwrap(h) {
                    Ok(Handle::Multipart { upload, shared: true, .. }) => {
                        let mine = std::mem::take(&mut *upload.receipts.lock().unwrap());
                        self.receipts.entry(key.clone()).or_default().extend(mine);
                        Ok(())
                    }
                    Ok(h) => self.target.close(h),
                    Err(_) => Err(std::io::Error::other("handle still in use")),
                },
                Err(e) => Err(e),
            },
            Op::Write | Op::Read => unreachable!("transfers are batched"),
        };
        let end = now_ns();
        self.traced(row.op.code(), key, start, end);
        let (s, e) = (self.since_t0(start), self.since_t0(end));
        match row.op {
            Op::OpenWrite | Op::OpenRead => self.figures.opened(s, e),
            _ => self.figures.closed(s, e),
        }
        if let Err(e) = outcome {
            self.figures.error(format!("{:?} {key}: {e}", row.op).to_lowercase());
            self.failed = true;
        }
    }

    /// Close the read handle of a key also open for writing, if it has one.
    fn close_reader(&mut self, key: &str) -> std::io::Result<()> {
        match self.readers.remove(key).map(Arc::try_unwrap) {
            None => Ok(()),
            Some(Ok(reader)) => self.target.close(reader),
            Some(Err(_)) => Err(std::io::Error::other("handle still in use")),
        }
    }

    fn transfers(&mut self, plan: &Plan, batch: &Batch, data: &mut Data, until: Option<u64>) {
        let max_len = batch.max_length() as usize;
        // Never more lanes (threads, buffers) than transfers.
        let workers = (self.in_flight as u64).min(batch.len()).max(1) as usize;
        let needs_buffer = self.direct || (matches!(data, Data::Payload) && !self.target.takes_bodies());
        if needs_buffer {
            while self.buffers.len() < workers {
                self.buffers.push(LaneBuffer::new(max_len));
            }
            for b in self.buffers.iter_mut().take(workers) {
                if b.buf.len() < max_len {
                    *b = LaneBuffer::new(max_len);
                }
            }
        }
        let handles: Vec<Option<Arc<Handle>>> =
            plan.keys.iter().map(|k| self.handles.get(k).cloned()).collect();
        let readers: Vec<Option<Arc<Handle>>> =
            plan.keys.iter().map(|k| self.readers.get(k).cloned()).collect();
        let stop = AtomicBool::new(false);
        let shared = Shared {
            target: self.target.as_ref(),
            payload: &self.payload,
            t0_ns: self.t0_ns,
            verify: self.verify,
            direct: self.direct,
            keys: &plan.keys,
            key_hashes: plan.keys.iter().map(|k| key_hash(k)).collect(),
            handles: &handles,
            readers: &readers,
            stop: &stop,
            bodies: &self.bodies,
            tracing: self.trace.is_some(),
            share: (batch.len() as usize).div_ceil(workers),
            trace_room: self.trace.as_ref().map_or(0, |t| t.room() / workers),
        };
        // Caller-supplied buffers are cut into one disjoint slice per transfer, in plan order
        // (they hold the transfers' bytes already: a slot per transfer adds under 1% to them).
        let lengths = (0..batch.len()).map(|t| batch.transfer(t).length as usize);
        let slots: Vec<Mutex<Slot>> = match data {
            Data::Payload => Vec::new(),
            Data::Source(src) => {
                let mut pos = 0usize;
                lengths
                    .map(|len| {
                        let slot = src.get(pos..pos + len).map_or(Slot::Missing, Slot::From);
                        pos += len;
                        Mutex::new(slot)
                    })
                    .collect()
            }
            Data::Sink(dst) => {
                let mut rest: &mut [u8] = std::mem::take(dst);
                lengths
                    .map(|len| {
                        if rest.len() < len {
                            return Mutex::new(Slot::Missing);
                        }
                        let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
                        rest = tail;
                        Mutex::new(Slot::Into(head))
                    })
                    .collect()
            }
        };
        let lanes = Lanes::new(batch.len(), batch.files(), workers);
        let buffers = &mut self.buffers;
        let results: Vec<(Figures, Option<LaneRows>)> = if workers == 1 {
            let buf = buffers.first_mut();
            vec![worker(&shared, batch, &slots, &lanes, 0, until, buf)]
        } else {
            std::thread::scope(|scope| {
                let mut bufs: Vec<Option<&mut LaneBuffer>> = buffers.iter_mut().map(Some).collect();
                bufs.resize_with(workers, || None);
                let handles: Vec<_> = bufs
                    .into_iter()
                    .take(workers)
                    .enumerate()
                    .map(|(lane, buf)| {
                        let (shared, slots, lanes) = (&shared, &slots, &lanes);
                        scope.spawn(move || {
                            let _counted = crate::schedstat::Counted;
                            worker(shared, batch, slots, lanes, lane, until, buf)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().expect("I/O worker panicked")).collect()
            })
        };
        let keys: Option<Arc<[String]>> = self.trace.as_ref().map(|_| Arc::from(plan.keys.as_slice()));
        for (figures, rows) in results {
            self.figures.merge(figures);
            if let (Some(trace), Some(rows), Some(keys)) = (self.trace.as_mut(), rows, &keys) {
                trace.append(rows, keys.clone());
            }
        }
        if stop.load(Ordering::Relaxed) {
            self.failed = true;
        }
    }
}

enum Slot<'a> {
    From(&'a [u8]),
    Into(&'a mut [u8]),
    Missing,
}

/// How many writes of which length the plan makes to each key (object stores choose between
/// one PUT and a multipart upload from it), in one pass: a scan of the plan per open made
/// opening 16,384 objects take 0.3 s.
///
/// A key also read in the plan (a mixed phase) whose one write would not hold all it reads is
/// hinted as written in parts: a single PUT would replace the object before its other ranges
/// are read, where an upload completes only at its close.
fn write_hints(plan: &Plan) -> Vec<WriteHint> {
    let mut hints = vec![WriteHint::default(); plan.keys.len()];
    let mut read_ends = vec![0u64; plan.keys.len()];
    for row in plan.rows.iter().filter(|r| r.count > 0) {
        match row.op {
            Op::Write => {
                let hint = &mut hints[row.key as usize];
                if hint.writes == 0 {
                    hint.part_bytes = row.length;
                }
                hint.writes += row.count;
            }
            Op::Read => {
                // from_columns checked that the run's last byte has an offset.
                let end = row.offset + (row.count - 1) * row.stride + row.length;
                read_ends[row.key as usize] = read_ends[row.key as usize].max(end);
            }
            _ => {}
        }
    }
    for (hint, read_end) in hints.iter_mut().zip(read_ends) {
        if hint.writes == 1 && read_end > hint.part_bytes {
            hint.writes = 2;
        }
    }
    hints
}

/// Every operation of `plan` in plan order: control rows as they are, each batch's transfers
/// one by one (what `run` makes, before lanes share them out).
pub fn operations(plan: &Plan) -> Result<Vec<Transfer>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < plan.rows.len() {
        let row = plan.rows[i];
        if row.op.is_transfer() {
            let end = plan.rows[i..].iter().position(|r| !r.op.is_transfer()).map_or(plan.rows.len(), |p| i + p);
            let batch = Batch::new(&plan.rows[i..end], plan.shuffle)?;
            out.extend((0..batch.len()).map(|t| batch.transfer(t)));
            i = end;
        } else {
            out.push(Transfer { op: row.op, key: row.key, offset: row.offset, length: row.length, writer: row.writer });
            i += 1;
        }
    }
    Ok(out)
}

fn not_open(key: &str) -> std::io::Error {
    std::io::Error::other(format!("{key} is not open"))
}

/// One in-flight lane: takes the next transfer until none is left or a lane failed.
fn worker(
    s: &Shared,
    batch: &Batch,
    slots: &[Mutex<Slot>],
    lanes: &Lanes,
    lane: usize,
    until: Option<u64>,
    mut buf: Option<&mut LaneBuffer>,
) -> (Figures, Option<LaneRows>) {
    let mut figures = Figures::default();
    // Reserved for the lane's share up front, so recording a transfer never allocates (a
    // time-based run goes round again: its rows grow by doubling).
    let mut rows = s.tracing.then(|| LaneRows::new(s.share, s.trace_room));
    // The lane's request body: reserved before the phase, refilled once the target lets go.
    let mut spare = s.bodies.lock().unwrap().pop();
    let mut search = Search::default();
    loop {
        if s.stop.load(Ordering::Relaxed) || cancel::requested() {
            break;
        }
        let next = if until.is_some() { lanes.again(lane) } else { lanes.next(lane, &mut search) };
        let Some(t) = next else { break };
        let row = &batch.transfer(t);
        let key = &s.keys[row.key as usize];
        let len = row.length as usize;
        let reader = if row.op == Op::Read { s.readers[row.key as usize].as_deref() } else { None };
        let Some(handle) = reader.or(s.handles[row.key as usize].as_deref()) else {
            figures.error(format!("{key} is not open"));
            s.stop.store(true, Ordering::Relaxed);
            break;
        };
        let stream = stream_of(row.writer, s.key_hashes[row.key as usize]);
        let mut slot = slots.get(t as usize).map(|m| std::mem::replace(&mut *m.lock().unwrap(), Slot::Missing));
        if matches!(slot, Some(Slot::Missing)) {
            figures.error(format!("{key}: caller buffer too small for transfer {t}"));
            s.stop.store(true, Ordering::Relaxed);
            break;
        }
        let result = match (row.op, slot.as_mut()) {
            (Op::Write, None) if s.target.takes_bodies() => {
                let body = owned_payload(s, stream, row.offset, len, spare.take());
                let r = timed(|| s.target.write_bytes(handle, row.offset, body.bytes.clone()));
                spare = body.bytes.try_into_mut().ok().map(|bytes| Body { bytes, held: body.held });
                r
            }
            (Op::Write, None) => {
                let own = buf.as_deref_mut().expect("payload writes have a buffer");
                let b = own.buf.as_mut_slice(len);
                s.payload.refill(stream, row.offset, b, &mut own.held);
                timed(|| s.target.write_at(handle, row.offset, b))
            }
            (Op::Write, Some(Slot::From(src))) => match buf.as_deref_mut().filter(|_| s.direct) {
                Some(aligned) => {
                    let b = aligned.scratch(len);
                    b.copy_from_slice(src);
                    timed(|| s.target.write_at(handle, row.offset, b))
                }
                None => timed(|| s.target.write_at(handle, row.offset, src)),
            },
            (Op::Read, None) if s.target.takes_bodies() => read_in_pieces(s, handle, stream, row, key),
            (Op::Read, None) => {
                let own = buf.as_deref_mut().expect("payload reads have a buffer");
                // A generated read leaves the payload in the buffer, so the next one (or a
                // write) only re-stamps it, as a lane's payload writes do.
                let (b, held) = if s.target.generates_reads() {
                    (own.buf.as_mut_slice(len), Some(&mut own.held))
                } else {
                    (own.scratch(len), None)
                };
                let r = read_into(s, handle, stream, row.offset, b, held);
                r.and_then(|t| verified(s, stream, row, key, b).map(|()| t))
            }
            (Op::Read, Some(Slot::Into(dst))) => match buf.as_deref_mut().filter(|_| s.direct) {
                Some(aligned) => {
                    let b = aligned.scratch(len);
                    let r = read_into(s, handle, stream, row.offset, b, None);
                    dst.copy_from_slice(b);
                    r
                }
                None => read_into(s, handle, stream, row.offset, dst, None),
            },
            _ => Err(Failure::Io(std::io::Error::other("plan row does not match its data"))),
        };
        let ended = match &result {
            Ok(t) => t.end_ns,
            Err(_) => now_ns(),
        };
        match result {
            Ok(t) => {
                let (start, end) = (t.start_ns.saturating_sub(s.t0_ns), t.end_ns.saturating_sub(s.t0_ns));
                figures.transferred(start, end, t.latency_ns, row.length);
                figures.sided(row.op == Op::Read, t.latency_ns, row.length);
                if let Some(rows) = rows.as_mut() {
                    rows.push(Traced {
                        start: t.start_ns,
                        end: t.end_ns,
                        offset: row.offset as i64,
                        length: row.length,
                        key: row.key,
                        op: row.op.code(),
                    });
                }
            }
            Err(Failure::Mismatch(message)) => figures.error(message),
            Err(Failure::Io(e)) => {
                let verb = if row.op == Op::Write { "write" } else { "read" };
                figures.error(format!("{verb} {key} offset {}: {e}", row.offset));
                s.stop.store(true, Ordering::Relaxed);
            }
        }
        if until.is_some_and(|limit| ended >= limit) {
            break;
        }
    }
    s.bodies.lock().unwrap().extend(spare);
    (figures, rows)
}

/// `len` payload bytes of `stream` at `offset` in a buffer the target can own, refilling
/// `spare` (the lane's previous body, when the target let go of it) rather than allocating.
fn owned_payload(s: &Shared, stream: u64, offset: u64, len: usize, spare: Option<Body>) -> Sent {
    let mut body = match spare {
        Some(b) if b.bytes.len() == len => b,
        _ => Body { bytes: BytesMut::zeroed(len), held: Held::default() },
    };
    s.payload.refill(stream, offset, &mut body.bytes, &mut body.held);
    Sent { bytes: body.bytes.freeze(), held: body.held }
}

/// A body handed to the target, and what it holds of the payload.
struct Sent {
    bytes: Bytes,
    held: Held,
}

enum Failure {
    Io(std::io::Error),
    Mismatch(String),
}

/// When a transfer's storage call ran, and its latency (fio's clat): the call alone, without
/// payload generation or checks. Two clock reads per operation serve the span and the latency.
struct Timing {
    start_ns: u64,
    end_ns: u64,
    latency_ns: u64,
}

fn timed(call: impl FnOnce() -> std::io::Result<()>) -> Result<Timing, Failure> {
    let start_ns = now_ns();
    call().map_err(Failure::Io)?;
    let end_ns = now_ns();
    Ok(Timing { start_ns, end_ns, latency_ns: end_ns - start_ns })
}

/// The target's read into `buf`; where the target keeps no data (null://), the payload of
/// `stream` is written where the read landed, as the target's answer (refilled in place when
/// `held` says what the buffer holds).
fn read_into(s: &Shared, handle: &Handle, stream: u64, offset: u64, buf: &mut [u8], held: Option<&mut Held>) -> Result<Timing, Failure> {
    timed(|| {
        s.target.read_at(handle, offset, buf)?;
        if s.target.generates_reads() {
            match held {
                Some(held) => s.payload.refill(stream, offset, buf, held),
                None => s.payload.fill(stream, offset, buf),
            }
        }
        Ok(())
    })
}

fn verified(s: &Shared, stream: u64, row: &Transfer, key: &str, buf: &[u8]) -> Result<(), Failure> {
    if !s.verify {
        return Ok(());
    }
    s.payload.check(stream, row.offset, buf).map_or(Ok(()), |m| Err(mismatch(row, key, m)))
}

fn mismatch(row: &Transfer, key: &str, m: Mismatch) -> Failure {
    Failure::Mismatch(format!(
        "verify failed: {key} offset {}: expected 0x{:02x}, found 0x{:02x} (data of rank {})",
        m.offset, m.expected, m.found, row.writer
    ))
}

/// A payload read whose bytes the target hands over piece by piece as they arrive (an HTTP
/// response body), each piece checked where it landed, with no copy into one buffer. The
/// latency leaves the checking out.
fn read_in_pieces(s: &Shared, handle: &Handle, stream: u64, row: &Transfer, key: &str) -> Result<Timing, Failure> {
    let mut first: Option<Mismatch> = None;
    let mut checking_ns = 0;
    let start_ns = now_ns();
    let outcome = s.target.read_pieces(handle, row.offset, row.length, &mut |at, piece| {
        if s.verify && first.is_none() {
            let t = now_ns();
            first = s.payload.check(stream, at, piece);
            checking_ns += now_ns() - t;
        }
    });
    let end_ns = now_ns();
    match (outcome, first) {
        (None, _) => Err(Failure::Io(std::io::Error::other("the target does not hand reads over in pieces"))),
        (Some(Err(e)), _) => Err(Failure::Io(e)),
        (Some(Ok(())), Some(m)) => Err(mismatch(row, key, m)),
        (Some(Ok(())), None) => Ok(Timing { start_ns, end_ns, latency_ns: (end_ns - start_ns).saturating_sub(checking_ns) }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::stream_id;
    use crate::plan::Columns;
    use crate::target::conformance::TempDir;
    use crate::target::{open_target, OpenOptions};
    use std::sync::MutexGuard;

    const FILES: u32 = 3;
    const BLOCKS: u64 = 8;
    const BLOCK: u64 = 16 << 10;

    fn serial() -> MutexGuard<'static, ()> {
        cancel::TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn keys() -> Vec<String> {
        (0..FILES).map(|i| format!("f{i}")).collect()
    }

    /// Open every file, BLOCKS transfers of each (the files take turns), close every file.
    fn plan(keys: &[String], open: Op, transfer: Op) -> Plan {
        let row = |op, key, count, length| Row { op, key, offset: 0, length, count, stride: BLOCK, writer: 0 };
        let mut rows: Vec<Row> = (0..FILES).map(|k| row(open, k, 1, 0)).collect();
        rows.extend((0..FILES).map(|k| row(transfer, k, BLOCKS, BLOCK)));
        rows.extend((0..FILES).map(|k| row(Op::Close, k, 1, 0)));
        Plan { rows, keys: keys.to_vec(), shuffle: None }
    }

    fn target(url: &str) -> Arc<dyn Target> {
        open_target(url, &OpenOptions { in_flight: 4, ..OpenOptions::default() }).unwrap()
    }

    fn run(target: &Arc<dyn Target>, plan: &Plan, in_flight: usize, verify: bool, until: Option<u64>) -> Figures {
        let mut executor = Executor::new(target.clone(), 5, now_ns(), in_flight, verify, false);
        executor.run(plan, Data::Payload, until);
        executor.figures()
    }

    fn write_then_verified_read(url: &str) {
        let _serial = serial();
        let target = target(url);
        let keys = keys();
        let all = u64::from(FILES) * BLOCKS * BLOCK;
        for in_flight in [1, 4] {
            let written = run(&target, &plan(&keys, Op::OpenWrite, Op::Write), in_flight, false, None);
            assert_eq!((written.errors, written.bytes, written.ops), (0, all, u64::from(FILES) * BLOCKS), "{:?}", written.first_errors);
            assert!(written.open.pair().is_some() && written.close.pair().is_some());
            assert_eq!(written.latency.len(), written.ops);
            let read = run(&target, &plan(&keys, Op::OpenRead, Op::Read), in_flight, true, None);
            assert_eq!((read.errors, read.bytes), (0, all), "{:?}", read.first_errors);
            assert_eq!(read.timeline.buckets.iter().sum::<u64>(), all);
        }
    }

    #[test]
    fn a_plan_writes_then_reads_back_verified_on_posix() {
        let dir = TempDir::new("exec-posix");
        write_then_verified_read(&dir.url());
        // What the plan wrote is the payload, byte for byte.
        let data = std::fs::read(dir.0.join("f1")).unwrap();
        assert_eq!(data.len() as u64, BLOCKS * BLOCK);
        assert!(Payload::new(5).check(stream_id(0, "f1"), 0, &data).is_none());
    }

    #[test]
    fn a_plan_writes_then_reads_back_verified_on_memory() {
        write_then_verified_read("memory://exec");
    }

    /// Every file opened for writing then for reading, each file's transfers alternating
    /// between a read of block 2i and a write of block i (parts from the first on, as an
    /// object store's upload needs them), then one close per file.
    fn mixed_plan(keys: &[String]) -> Plan {
        let row = |op, key, offset, count, length| Row { op, key, offset, length, count, stride: BLOCK, writer: 0 };
        let mut rows: Vec<Row> = (0..FILES).map(|k| row(Op::OpenWrite, k, 0, 1, 0)).collect();
        rows.extend((0..FILES).map(|k| row(Op::OpenRead, k, 0, 1, 0)));
        for k in 0..FILES {
            for i in 0..BLOCKS / 2 {
                rows.push(row(Op::Read, k, 2 * i * BLOCK, 1, BLOCK));
                rows.push(row(Op::Write, k, i * BLOCK, 1, BLOCK));
            }
        }
        rows.extend((0..FILES).map(|k| row(Op::Close, k, 0, 1, 0)));
        Plan { rows, keys: keys.to_vec(), shuffle: None }
    }

    fn mixed_reads_and_writes_each_side_apart(url: &str) {
        let _serial = serial();
        let target = target(url);
        let keys = keys();
        for in_flight in [1, 3] {
            let laid = run(&target, &plan(&keys, Op::OpenWrite, Op::Write), 2, false, None);
            assert_eq!(laid.errors, 0, "{:?}", laid.first_errors);
            let mixed = run(&target, &mixed_plan(&keys), in_flight, true, None);
            assert_eq!(mixed.errors, 0, "{url}: {:?}", mixed.first_errors);
            let half = u64::from(FILES) * BLOCKS / 2;
            assert_eq!((mixed.reads.ops, mixed.writes.ops, mixed.ops), (half, half, 2 * half));
            assert_eq!(mixed.reads.bytes + mixed.writes.bytes, mixed.bytes);
            assert_eq!((mixed.reads.latency.len(), mixed.writes.latency.len()), (half, half));
            // What the mixed phase left holds its writes' data, read back verified.
            let file = Plan { rows: mixed_plan(&keys).rows.into_iter().filter(|r| r.op != Op::Read && r.op != Op::OpenWrite).map(|r| Row { op: if r.op == Op::Write { Op::Read } else { r.op }, ..r }).collect(), keys: keys.clone(), shuffle: None };
            let back = run(&target, &file, 1, true, None);
            assert_eq!((back.errors, back.ops), (0, half), "{url}: {:?}", back.first_errors);
        }
    }

    #[test]
    fn a_mixed_plan_reads_and_writes_the_same_files_on_posix() {
        mixed_reads_and_writes_each_side_apart(&TempDir::new("exec-mixed").url());
    }

    #[test]
    fn a_mixed_plan_reads_and_writes_the_same_objects_on_memory() {
        // Objects of several transfers: the reads find the laid-out object until the upload
        // of the writes completes at the close.
        mixed_reads_and_writes_each_side_apart("memory://mixed");
    }

    #[test]
    fn a_plan_writes_then_reads_back_verified_on_null() {
        write_then_verified_read("null://");
    }

    #[test]
    fn null_reads_verify_where_nothing_was_written_and_fill_a_callers_buffer() {
        let _serial = serial();
        let target = target("null://");
        let keys = keys();
        let read = run(&target, &plan(&keys, Op::OpenRead, Op::Read), 2, true, None);
        assert_eq!((read.errors, read.bytes), (0, u64::from(FILES) * BLOCKS * BLOCK), "{:?}", read.first_errors);
        // Read into a caller's buffer (read-and-scatter): it holds each file's payload, in plan order.
        let one = Plan { rows: plan(&keys, Op::OpenRead, Op::Read).rows.into_iter().filter(|r| r.key == 1).collect(), keys: keys.clone(), shuffle: None };
        let mut sink = vec![0u8; (BLOCKS * BLOCK) as usize];
        let mut executor = Executor::new(target.clone(), 5, now_ns(), 1, false, false);
        executor.run(&one, Data::Sink(&mut sink), None);
        assert_eq!(executor.figures().errors, 0);
        assert!(Payload::new(5).check(stream_id(0, "f1"), 0, &sink).is_none());
    }

    #[test]
    fn a_null_delay_holds_every_transfer_at_least_that_long() {
        let _serial = serial();
        let target = target("null://?delay=2ms");
        let keys = keys();
        let written = run(&target, &plan(&keys, Op::OpenWrite, Op::Write), 2, false, None);
        assert_eq!(written.errors, 0);
        // A lower bound that sleep guarantees, whatever the load: no timing threshold above.
        // (within the histogram's precision: 3 significant digits)
        assert!(written.latency.min() >= 1_996_000, "{}", written.latency.min());
        let (opened, closed) = (written.open.pair().unwrap(), written.close.pair().unwrap());
        assert!(opened.1 - opened.0 >= 2_000_000 && closed.1 - closed.0 >= 2_000_000);
    }

    #[test]
    fn a_changed_byte_fails_verification_and_says_where() {
        let _serial = serial();
        let dir = TempDir::new("exec-flip");
        let target = target(&dir.url());
        let keys = keys();
        run(&target, &plan(&keys, Op::OpenWrite, Op::Write), 1, false, None);
        let path = dir.0.join("f2");
        let mut data = std::fs::read(&path).unwrap();
        data[40_000] ^= 0xff;
        std::fs::write(&path, data).unwrap();
        let read = run(&target, &plan(&keys, Op::OpenRead, Op::Read), 1, true, None);
        assert_eq!(read.errors, 1);
        assert!(read.first_errors[0].starts_with("verify failed: f2 offset 40000"), "{:?}", read.first_errors);
    }

    #[test]
    fn reading_a_missing_key_is_an_error_in_the_figures() {
        let _serial = serial();
        for url in [TempDir::new("exec-missing").url(), "memory://missing".to_string()] {
            let target = target(&url);
            let keys = keys();
            let read = run(&target, &plan(&keys, Op::OpenRead, Op::Read), 2, true, None);
            assert!(read.errors >= 1, "{url}");
            // Two lanes: whichever key's read fails first is named first.
            let named = keys.iter().any(|k| read.first_errors[0].contains(k.as_str()));
            assert!(named, "{url}: {:?}", read.first_errors);
            assert_eq!(read.bytes, 0, "{url}");
        }
    }

    #[test]
    fn until_goes_round_the_transfers_again_and_closes_once() {
        let _serial = serial();
        let dir = TempDir::new("exec-until");
        let target = target(&dir.url());
        let keys = keys();
        let until = now_ns() + 50_000_000;
        let written = run(&target, &plan(&keys, Op::OpenWrite, Op::Write), 2, false, Some(until));
        assert_eq!(written.errors, 0);
        assert!(written.ops > 2 * u64::from(FILES) * BLOCKS, "went round more than twice: {}", written.ops);
        assert_eq!(written.bytes, written.ops * BLOCK);
        assert_eq!(written.requests.by_kind[crate::requests::Kind::Close as usize], u64::from(FILES));
        for key in &keys {
            assert_eq!(std::fs::metadata(dir.0.join(key)).unwrap().len(), BLOCKS * BLOCK, "no write past the plan");
        }
    }

    #[test]
    fn cancel_stops_a_run_before_its_next_transfer() {
        let _serial = serial();
        let dir = TempDir::new("exec-cancel");
        let target = target(&dir.url());
        let keys = keys();
        let hour = now_ns() + 3_600_000_000_000;
        let mut executor = Executor::new(target.clone(), 5, now_ns(), 2, false, false);
        let stopped = std::thread::scope(|scope| {
            let running = scope.spawn(|| {
                executor.run(&plan(&keys, Op::OpenWrite, Op::Write), Data::Payload, Some(hour));
            });
            while std::fs::metadata(dir.0.join("f0")).map_or(0, |m| m.len()) == 0 {
                std::thread::yield_now();
            }
            cancel::set(true);
            running.join()
        });
        cancel::set(false);
        stopped.unwrap();
        let figures = executor.figures();
        assert_eq!(figures.errors, 0);
        assert!(figures.ops >= 1);
        assert!(figures.transfer.end_ns.unwrap() < 3_600_000_000_000);
        // Still cancelled, a run does nothing at all; cleared, it runs again.
        cancel::set(true);
        let none = run(&target, &plan(&keys, Op::OpenWrite, Op::Write), 2, false, None);
        cancel::set(false);
        assert_eq!((none.ops, none.open.pair()), (0, None));
        assert_eq!(run(&target, &plan(&keys, Op::OpenWrite, Op::Write), 2, false, None).errors, 0);
    }

    #[test]
    fn write_hints_and_operations_count_every_transfer_of_a_run() {
        let keys = vec!["a".to_string(), "b".to_string()];
        // open a, open b; a run of 3 in each (the files take turns); close both.
        let columns = Columns {
            ops: &[1, 1, 3, 3, 6, 6],
            key_index: &[0, 1, 0, 1, 0, 1],
            offsets: &[0, 0, 0, 0, 0, 0],
            lengths: &[0, 0, 8, 8, 0, 0],
            counts: &[1, 1, 3, 3, 1, 1],
            strides: &[0, 0, 8, 8, 0, 0],
            writers: &[0, 0, 2, 2, 0, 0],
        };
        let plan = Plan::from_columns(&columns, keys.clone(), None).unwrap();
        let hints = write_hints(&plan);
        assert_eq!((hints[0].writes, hints[0].part_bytes, hints[1].writes), (3, 8, 3));
        let ops: Vec<(u8, u32, u64)> = operations(&plan).unwrap().iter().map(|x| (x.op.code(), x.key, x.offset)).collect();
        assert_eq!(
            ops,
            vec![(1, 0, 0), (1, 1, 0), (3, 0, 0), (3, 1, 0), (3, 0, 8), (3, 1, 8), (3, 0, 16), (3, 1, 16), (6, 0, 0), (6, 1, 0)]
        );
        let shuffled = Plan::from_columns(&columns, keys.clone(), Some((1, 0, 0))).unwrap();
        let mut moved: Vec<(u32, u64)> = operations(&shuffled).unwrap()[2..8].iter().map(|x| (x.key, x.offset)).collect();
        moved.sort_unstable();
        assert_eq!(moved, vec![(0, 0), (0, 8), (0, 16), (1, 0), (1, 8), (1, 16)]);
    }

    #[test]
    fn a_single_write_to_a_key_read_past_it_is_hinted_as_parts() {
        let row = |op, key, offset| Row { op, key, offset, length: BLOCK, count: 1, stride: BLOCK, writer: 0 };
        // Key 0: one write, reads past it (a PUT would cut the object short); key 1: one
        // write holding all that is read; key 2: written only.
        let rows = vec![
            row(Op::Write, 0, 0),
            row(Op::Read, 0, 3 * BLOCK),
            row(Op::Write, 1, 0),
            row(Op::Read, 1, 0),
            row(Op::Write, 2, 0),
        ];
        let hints = write_hints(&Plan { rows, keys: keys(), shuffle: None });
        assert_eq!(hints.iter().map(|h| h.writes).collect::<Vec<_>>(), vec![2, 1, 1]);
        assert!(hints.iter().all(|h| h.part_bytes == BLOCK));
    }

    #[test]
    fn a_run_past_the_largest_offset_is_refused() {
        let keys = vec!["a".to_string()];
        let columns = Columns {
            ops: &[3],
            key_index: &[0],
            offsets: &[u64::MAX - 8],
            lengths: &[8],
            counts: &[2],
            strides: &[8],
            writers: &[0],
        };
        assert!(Plan::from_columns(&columns, keys.clone(), None).err().unwrap().contains("past the largest offset"));
    }
}
