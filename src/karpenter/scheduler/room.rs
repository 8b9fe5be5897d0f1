//! Which planned NodeClaims have room for a pod: the first thing `NodeClaim.CanAdd` refuses
//! on, and the one most NodeClaims of a large batch refuse every pod on.
//!
//! A NodeClaim's room is the most cpu, memory and pods any of its types has left
//! ([`Room`]); a pod asking more of one is refused at once. Karpenter asks every NodeClaim
//! for every pod (`addToInflightNode`); most of them are full. The pods of a round are
//! known when it starts (its queue), so the least room any of them asks is known too: a
//! NodeClaim without that room takes no pod of the round, and a pod passes over it unread.
//! Only the NodeClaims with that room (here *open*) are listed, per pool, and asked.

use super::HEADROOM;

/// Cpu, memory and pods in milli-units, one per [`HEADROOM`] resource.
pub(super) type Room = [i128; HEADROOM.len()];

/// Whether `left` leaves `need` of each [`HEADROOM`] resource.
pub(super) fn fits(need: &Room, left: &Room) -> bool {
    need.iter().zip(left).all(|(need, left)| need <= left)
}

/// Raises each of `most` to the matching value of `left`.
pub(super) fn raise(most: &mut Room, left: Room) {
    for (most, left) in most.iter_mut().zip(left) {
        *most = (*most).max(left);
    }
}

/// The room of each NodeClaim of the batch, and per pool those with room for some pod of
/// the round.
pub(super) struct Rooms {
    /// The least room any pod of the round asks, per resource (`i128::MIN` before the
    /// first round: every NodeClaim is open).
    least: Room,
    /// Per NodeClaim, its room.
    room: Vec<Room>,
    /// Per NodeClaim, whether it has `least`, so that it is listed in `open`.
    is_open: Vec<bool>,
    /// Per pool, its open NodeClaims (in no order: [`Rooms::with_room`]'s caller sorts).
    open: Vec<Vec<usize>>,
    /// The pools with an open NodeClaim.
    pools: Vec<usize>,
    /// Per pool, the most any of its open NodeClaims has left of each resource (`None`: to
    /// be reckoned again): a pod asking more passes over the pool at once.
    most: Vec<Option<Room>>,
    /// Per pool, the room a pod last asked of its open NodeClaims and those that have it
    /// (`None`: to be listed again, since one of them changed): the queue is sorted by what
    /// pods request, so pods one after another mostly ask the same room.
    roomy: Vec<Option<(Room, Vec<usize>)>>,
}

impl Rooms {
    /// No NodeClaim yet, in a run of `pools` pools.
    pub(super) fn new(pools: usize) -> Self {
        Rooms {
            least: [i128::MIN; HEADROOM.len()],
            room: Vec::new(),
            is_open: Vec::new(),
            open: vec![Vec::new(); pools],
            pools: Vec::new(),
            most: vec![None; pools],
            roomy: vec![None; pools],
        }
    }

    /// Whether NodeClaim `c` leaves `need`.
    pub(super) fn has(&self, c: usize, need: &Room) -> bool {
        fits(need, &self.room[c])
    }

    /// A round starts, whose pods ask at least `least`: the NodeClaims of each pool in
    /// `claims_of` that have it are open.
    pub(super) fn start_round(&mut self, least: Room, claims_of: &[Vec<usize>]) {
        self.least = least;
        self.pools.clear();
        for (pool, claims) in claims_of.iter().enumerate() {
            let open = &mut self.open[pool];
            open.clear();
            for &c in claims {
                self.is_open[c] = fits(&least, &self.room[c]);
                if self.is_open[c] {
                    open.push(c);
                }
            }
            if !open.is_empty() {
                self.pools.push(pool);
            }
            self.most[pool] = None;
            self.roomy[pool] = None;
        }
    }

    /// A NodeClaim is made in pool `pool` with room `room`; it is the next by index.
    pub(super) fn made(&mut self, pool: usize, room: Room) {
        let c = self.room.len();
        self.room.push(room);
        self.is_open.push(false);
        if fits(&self.least, &room) {
            if let Some(most) = &mut self.most[pool] {
                raise(most, room);
            }
            self.open_claim(c, pool);
        }
    }

    /// NodeClaim `c` of pool `pool` took a pod or launched: its room is now `room`.
    pub(super) fn set(&mut self, c: usize, pool: usize, room: Room) {
        self.room[c] = room;
        self.most[pool] = None;
        match (self.is_open[c], fits(&self.least, &room)) {
            (false, true) => self.open_claim(c, pool),
            (true, false) => {
                self.is_open[c] = false;
                let open = &mut self.open[pool];
                if let Some(at) = open.iter().position(|&o| o == c) {
                    open.swap_remove(at);
                }
                if open.is_empty()
                    && let Some(at) = self.pools.iter().position(|&p| p == pool)
                {
                    self.pools.swap_remove(at);
                }
                self.roomy[pool] = None;
            }
            _ => self.roomy[pool] = None,
        }
    }

    fn open_claim(&mut self, c: usize, pool: usize) {
        self.is_open[c] = true;
        if self.open[pool].is_empty() {
            self.pools.push(pool);
        }
        self.open[pool].push(c);
        self.roomy[pool] = None;
    }

    /// The NodeClaims of the pools in `joinable` that leave `need`, in no order. `need`
    /// is a pod's of the round, so it is at least `least`: a NodeClaim not open does not
    /// leave it.
    pub(super) fn with_room(&mut self, joinable: &[bool], need: &Room) -> Vec<usize> {
        debug_assert!(
            fits(&self.least, need),
            "a pod asks less than the round's least"
        );
        let mut claims = Vec::new();
        for &pool in &self.pools {
            if !joinable[pool] {
                continue;
            }
            let (open, room) = (&self.open[pool], &self.room);
            let most = *self.most[pool].get_or_insert_with(|| {
                let mut most = [i128::MIN; HEADROOM.len()];
                for &c in open {
                    raise(&mut most, room[c]);
                }
                most
            });
            if !fits(need, &most) {
                continue;
            }
            if !matches!(&self.roomy[pool], Some((asked, _)) if asked == need) {
                let roomy = open.iter().copied().filter(|&c| fits(need, &room[c]));
                self.roomy[pool] = Some((*need, roomy.collect()));
            }
            if let Some((_, roomy)) = &self.roomy[pool] {
                claims.extend_from_slice(roomy);
            }
        }
        claims
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every NodeClaim of a joinable pool that leaves `need`, by brute force.
    fn brute(room: &[Room], pool_of: &[usize], joinable: &[bool], need: &Room) -> Vec<usize> {
        (0..room.len())
            .filter(|&c| joinable[pool_of[c]] && fits(need, &room[c]))
            .collect()
    }

    fn room() -> impl Strategy<Value = Room> {
        [0i128..8, 0i128..8, 0i128..4]
    }

    proptest! {
        /// Whatever NodeClaims are made and change, and whatever least a round asks, the
        /// NodeClaims with room for a pod of the round are those a scan of all finds.
        #[test]
        fn with_room_is_every_claim_that_leaves_the_need(
            pools in 1usize..4,
            steps in proptest::collection::vec((0usize..3, 0usize..16, room(), room()), 1..40),
            joinable_bits in 0u8..16,
        ) {
            let joinable: Vec<bool> = (0..pools).map(|p| joinable_bits & (1 << p) != 0).collect();
            let mut rooms = Rooms::new(pools);
            let (mut all, mut pool_of) = (Vec::new(), Vec::new());
            let mut claims_of = vec![Vec::new(); pools];
            let mut least = [i128::MIN; HEADROOM.len()];
            for (what, pick, r, need) in steps {
                match what {
                    0 => {
                        let pool = pick % pools;
                        claims_of[pool].push(all.len());
                        rooms.made(pool, r);
                        all.push(r);
                        pool_of.push(pool);
                    }
                    1 if !all.is_empty() => {
                        let c = pick % all.len();
                        rooms.set(c, pool_of[c], r);
                        all[c] = r;
                    }
                    _ => {
                        least = r;
                        rooms.start_round(least, &claims_of);
                    }
                }
                let need = [least[0].max(need[0]), least[1].max(need[1]), least[2].max(need[2])];
                let mut got = rooms.with_room(&joinable, &need);
                got.sort_unstable();
                prop_assert_eq!(got, brute(&all, &pool_of, &joinable, &need));
            }
        }
    }
}
