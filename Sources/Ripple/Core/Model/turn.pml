/*
 * The delivery turn (Core/TurnMachine.swift, Core/DeliveryTurn.swift) and the owners built on
 * it — Subscriber, SubjectStorage, SerialForwarder, DeliveryRelay — as spin checks them.
 * README.md in this folder maps every Swift transition to its inline and branch here (each branch
 * carries the Swift transition's name as a comment).
 *
 * Owners 0 and 1 have a delivery turn: a turn word (`holder`: 0 free, else a thread id; `look`:
 * the flag that sends the holder through the lock) and a FIFO queue of entries (event, owner
 * thread or 0 = ownerless) guarded by the owner's lock. Owners NQ + r are deliver(on:) relays in
 * the wait-for graph: their holder is the draining thread, or for a drain that is scheduled and
 * not started, the thread recorded as occupying the relay's queue (QueueOccupancy). A
 * lock-protected section is one `atomic` step, and so is each compare-and-swap or exchange of an
 * atomic word; user callbacks run outside both. Where a lock section stores a word that lock-free
 * code reads (SubjectStorage.send: `terminated`, then the fence), it is split, and the lock itself
 * is modelled (`slock`) so that other lock sections still exclude it.
 *
 * Each thread has one TurnWaiter: one state word `ws` (0 waiting, 1 handed the turn, 2 asleep,
 * 3 its entries delivered) and a semaphore count `sem`, shared by every kind of wait (a turn,
 * room in a relay). A wake asserts that it never overwrites a wake not yet consumed.
 *
 * Scenarios (-D at `spin -a` time, see .ci/spin-check and README.md):
 *   SUBSCRIBER  two threads send values to one Subscriber; one of them sends the terminal event
 *               and then disposes (the passthrough's forward-then-dispose); value 1's callback
 *               sends value 5 re-entrantly. THREE adds a third sender. REENTRANT_TERMINAL: value
 *               3's callback sends the terminal event re-entrantly and disposes. DISPOSE: no
 *               terminal event; thread 1 disposes after its values (dropOwnerless, tidy).
 *   SUBJECT     a Subject (no history) with one subscription: thread 1 sends values on the
 *               lock-free path, thread 2 a value and the terminal event. REMOVE: thread 1
 *               disposes the subscription between its values (removal now, or by the holder's
 *               tidy). NO_RECHECK drops the `terminated` re-check after the lock-free take.
 *   JOIN        one thread sends values to a ReplaySubject while another subscribes: the joiner
 *               gets its replay and then every later value, with no gap and no duplicate.
 *   CYCLE       two owners whose callbacks send to each other, driven by two threads at once.
 *   FLOOD       a thread sends forever while another sends once: the single send returns
 *               (checked as LTL `<> returned` with weak fairness: defect 0 of old-turn.pml).
 *   FORWARDER   an operator's SerialForwarder: senders enqueue (under the operator's lock) and
 *               drain later; one sender's event may be delivered for it before it drains; event
 *               2's callback enqueues event 6 into the forwarder and drains, re-entrantly. Then
 *               each sender sends to a Subscriber that the other one holds. TWICE: the first
 *               sender enqueues a second event before it drains. SECOND_OWNED and NO_IS_LOOKING
 *               plant known defects (a second owed wake; a drain that looks from inside the
 *               holder's own callback).
 *   RELAY       deliver(on:) with a buffer of one value and `.wait`: thread 1 sends values into a
 *               subject whose subscription feeds the relay; the drain, an action on thread 2's
 *               scheduler, delivers them and sends each one back into that subject.
 *   RELAYS      two relays on two serial schedulers A and B (one thread each): an action on A
 *               sends 1-4 into the relay on B, whose drain delivers into the relay on A, whose
 *               drain is scheduled on A behind that action. NO_OCCUPANT: a pending drain held by
 *               nobody.
 *   RELAY_PLAIN_BLOCK  the relay's queue q runs a plain block (`q.async { ... }`, not a Ripple
 *               action: not recorded as q's occupant) that sends into the subject feeding the
 *               relay, while thread 1 holds that subject's turn and waits for room; the relay's
 *               drain is behind the plain block. (An action of a scheduler whose queue targets q
 *               is the same case here: it holds q up, is current for q's scheduler, and is
 *               recorded only in its own queue's occupancy.) DISPOSE: a third thread disposes the
 *               relay at any moment.
 *   RELAY_TARGET  a block on the queue that q targets sends into the relay directly: the relay's
 *               drain is behind it, the sender is not current for q's scheduler and not recorded.
 *   UNBOUNDED_WAIT  a relay sender waits for room without a time bound (Ripple before the bounded
 *               wait): RELAY_PLAIN_BLOCK and RELAY_TARGET then deadlock, as does RELAYS with
 *               NO_OCCUPANT. TIMEOUT_IGNORES_WAKE: a timed-out sender that a drain had already taken
 *               out of the waiters leaves without consuming the wake that drain brings.
 * Properties: assertions (no lost or doubled event, delivery in entry order, which includes
 * per-sender FIFO, callbacks of one owner never overlap, the terminal event exactly once and
 * last, queues bounded, a relay over its bound only by values that timed out or may not wait,
 * no wake overwrites another, none left behind), no invalid end state (no deadlock), and for
 * FLOOD the liveness claim.
 */

#define NT 4          /* threads 1..NT-1 (0 is unused: it means "free" / "ownerless" / "nobody") */
#define NQ 2          /* owners with a delivery turn: 0, 1 */
#define NR 2          /* deliver(on:) relays: owners NQ + r in the wait-for graph */
#define QCAP 4        /* an assertion fails before a turn queue would hold more */
#define NONE 0
#define TERM 15       /* the terminal event */

/* TurnWaiter.state */
#define HANDED 1
#define ASLEEP 2
#define DELIVERED 3

/* what the holder's look decided (TurnMachine.Look) */
#define DELIVER 1
#define DELIVER_FOR 2
#define TIDY 3
#define HANDOFF 4
#define RELEASED 5

byte holder[NQ];      /* 0 free, else the holder's thread */
bool look[NQ];
chan queue[NQ] = [QCAP] of { byte, byte };   /* event, waiting thread (0 = ownerless) */
byte waitsFor[NT];    /* WaitGraph: owner + 1 that thread t waits for, or 0 */
byte ws[NT];          /* TurnWaiter.state */
byte sem[NT];         /* TurnWaiter.handed, the semaphore's count */
bool expects[NT];     /* TurnWaiter.expectsWake */
#ifndef BUDGET
#define BUDGET 1      /* TurnMachine.combiningBudget (16 in Swift; 0 and 1 are the cases that differ) */
#endif
byte inCallback[NQ];  /* callbacks running on the owner now: at most 1 */

/* deliver(on:) relays (DeliveryRelay) */
#define RBOUND 1      /* bufferSize */
#define RCAP 4
#define PENDING 9     /* RelayDrain.scheduledWord */
chan rq[NR] = [RCAP] of { byte };   /* state.queue (values only) */
byte drainer[NR];     /* DeliveryRelay.drainer (RelayDrain.word): 0 idle, PENDING scheduled, else the draining thread */
bool rsched[NR];      /* the drain's ScheduledAction is on the relay's queue (not run, not cancelled) */
byte occupant[NR];    /* QueueOccupancy.occupant of relay r's queue: a thread running a Ripple action on it */
byte onq[NT];         /* bit r: thread t runs on relay r's queue or on one targeting it (Scheduler.isCurrent) */
byte rwaiters[NR];    /* state.waiters, as a set of threads (bit t) */
byte overTimeout[NR]; /* values let in beyond the bound after a timed-out wait */
byte overDesigned[NR];/* values let in beyond the bound because the sender may not wait (isCurrent, a cycle) */
byte timeouts;        /* relay waits that timed out */
byte got;             /* values delivered downstream of the last relay */
byte passed;          /* RELAYS: values relay 1 (on B) delivered into relay 0 (on A) */
bool rdisposed[NR];   /* state.isDisposed */
#define isCurrent(t, r) ((onq[t] >> (r)) & 1)

/* Subscriber state (owner 0 in SUBSCRIBER) */
byte status;          /* bit 1: terminal accepted; bit 2: disposed */
bool alive = 1;       /* the closures; released by the terminal event or by disposal */
bool terminalDelivered;
byte entries;         /* entry counter: the order events enter the turn */
byte entryOf[16];     /* event -> its entry number (0 = never entered) */
byte lastDelivered;   /* entry number of the last delivery, on owner 0 */
byte deliveredCount[16];
byte finished;        /* threads done */

/* SUBJECT: a Subject without history, one subscription */
bool terminated;      /* SubjectStorage.terminated (and state.terminal != nil) */
bool subEnded;        /* the subscription's `ended` (disposed, or its terminal event delivered) */
bool inList = 1;      /* the subscription is in the holder's subscriber list */
bool removal;         /* it waits in state.removals */
bool removalTaken;    /* the holder took it out of state.removals for its tidy */
bool dropped[4];      /* a value whose lock-free send found the subject ended at the re-check */
byte slock;           /* the subject's state lock, held across a send's two steps (0: free) */

/* JOIN: a ReplaySubject with one early subscriber and one joiner */
byte history[4]; byte historyCount;
bool joined; byte joinerGot[8]; byte joinerCount;
bool returned;        /* FLOOD: the single send returned */

/* FORWARDER */
bool isLooking;       /* SerialForwarder.State.isLooking */

#define holderIs(o, t) (holder[o] == t)
#define JOINWORK 9    /* JOIN: the subscribe of the joiner (its replay) */
byte replayLength;    /* JOIN: history length when the subscribe entered */

#if defined(SUBSCRIBER) || defined(SUBJECT)
#define ORDERED_OWNER 1   /* owner 0 checks entry order, once-only and nothing after the terminal event */
#else
#define ORDERED_OWNER 0
#endif
#ifdef SUBSCRIBER
#define SUBSCRIBER_OWNER 1
#else
#define SUBSCRIBER_OWNER 0
#endif
#ifdef JOIN
#define LOCKFREE_SEND 0   /* a ReplaySubject records history: every send takes the lock */
#else
#define LOCKFREE_SEND 1
#endif

/* Locals of the inlines, declared once per proctype (Promela hoists inline declarations). */
#define LOCALS byte result, cyc, x, steps, next, le, lw, old, e2, w2, n, i, combined, lo, act, h, rres, w, k, batch, bv[4], dr; \
               bool accepted, took, last, gotTurn, chk, found, timedOut, step, tl, first

/* Records that event e enters owner o's turn now (under the lock or with the take). */
inline enter(o, e) {
  if
  :: o == 0 && e != NONE && entryOf[e] == 0 -> entries++; entryOf[e] = entries   /* each event enters once */
  :: else -> skip
  fi;
#ifdef JOIN
  /* a subject records a value, or snapshots a subscriber's replay, when the event enters */
  if :: e == JOINWORK -> replayLength = historyCount :: else -> history[historyCount] = e; historyCount++ fi
#endif
  skip
}

/* ---------------------------------------------------------------- TurnWaiter */

/* TurnWaiter.wake(with:) (handOff: HANDED, done: DELIVERED): exchange the state word, signal the
   semaphore if the waiter was asleep. A wake must never overwrite one not yet consumed. */
inline wake(wt, news) {
  atomic {
    assert(ws[wt] == 0 || ws[wt] == ASLEEP);
    if :: ws[wt] == ASLEEP -> sem[wt]++ :: else -> skip fi;
    ws[wt] = news
  }
}

/* TurnWaiter.wait: spin (consume a hand-off or a delivery), else go to sleep (CAS 0 -> asleep)
   and, once signalled, consume what the wake left (exchange 0). Then WaitGraph.stopWaiting.
   gotTurn: handed the turn (true) or its entries delivered (false). */
inline waitWake(t, gotTurn) {
  if
  :: atomic { ws[t] == HANDED -> ws[t] = 0; gotTurn = 1; expects[t] = 0; waitsFor[t] = 0 }
  :: atomic { ws[t] == DELIVERED -> ws[t] = 0; gotTurn = 0; expects[t] = 0; waitsFor[t] = 0 }
  :: atomic { ws[t] == 0 -> ws[t] = ASLEEP; expects[t] = 0 };
     atomic { sem[t] > 0 -> sem[t]-- };
     atomic { assert(ws[t] == HANDED || ws[t] == DELIVERED); gotTurn = (ws[t] == HANDED); ws[t] = 0; waitsFor[t] = 0 }
  fi
}

/* ---------------------------------------------------------------- the wait-for graph */

/* relay r's turnWord: the draining thread, or for a pending drain its queue's recorded occupant. */
inline relayHolder(r, hh) {
#ifdef NO_OCCUPANT
  if :: drainer[r] == PENDING -> hh = 0 :: else -> hh = drainer[r] fi
#else
  if :: drainer[r] == PENDING -> hh = occupant[r] :: else -> hh = drainer[r] fi
#endif
}

/* owner o's holder as the graph reads it (TurnOwner.turnWord). */
inline holderOf(o, hh) {
  if
  :: o < NQ -> hh = holder[o]
  :: o >= NQ -> relayHolder(o - NQ, hh)
  fi
}

/* WaitGraph.register: cycle = whether thread t waiting for an owner held by hh closes a cycle. */
inline closesCycle(t, hh, cycle) {
  x = hh; steps = 0;
  cycle = 0;
  do
  :: x == t -> cycle = 1; break
  :: x != t && (x == 0 || waitsFor[x] == 0 || steps > NT) -> break   /* nobody, or `x` runs */
  :: x != t && x != 0 && waitsFor[x] != 0 && steps <= NT ->
       holderOf(waitsFor[x] - 1, next);
       if
       :: next == 0 || next == x -> break   /* free, or handed the turn and not yet awake: it runs */
       :: else -> x = next; steps++
       fi
  od
}

/* ---------------------------------------------------------------- the turn queue */

/* owner = the thread owning the last entry of owner o's queue (NONE when empty or ownerless);
   rotates the queue once, leaving it as it was. Inside an atomic step. */
inline lastOwnerOf(o, owner) {
  owner = NONE; n = len(queue[o]);
  do
  :: n > 0 -> queue[o]?e2,w2; queue[o]!e2,w2; owner = w2; n--
  :: n == 0 -> break
  od
}

/* owns = TurnMachine.hasEntries(ownedBy: t): whether thread t owns an entry of owner o's queue. */
inline ownsEntries(o, t, owns) {
  owns = 0; n = len(queue[o]);
  do
  :: n > 0 -> queue[o]?e2,w2; queue[o]!e2,w2; if :: w2 == t -> owns = 1 :: else -> skip fi; n--
  :: n == 0 -> break
  od
}

/* ---------------------------------------------------------------- callbacks */

/* The user's callback for event e on owner o, run by the holder t (outside any lock). */
inline callback(o, e, t) {
  inCallback[o]++;
  assert(inCallback[o] == 1);                     /* callbacks of one owner never overlap */
  if
  :: ORDERED_OWNER && o == 0 ->
       assert(!terminalDelivered);                 /* nothing after the terminal event */
       assert(entryOf[e] > lastDelivered);         /* delivered in entry order, each once */
       lastDelivered = entryOf[e];
       deliveredCount[e]++;
       assert(deliveredCount[e] == 1);
       if :: e == TERM -> terminalDelivered = 1 :: else -> skip fi
  :: else ->
#ifndef FLOOD
       deliveredCount[e]++; assert(deliveredCount[e] == 1)
#else
       skip
#endif
  fi;
  inCallback[o]--
}

/* What the subscriber's callbacks send to their own subscriber (queueReentrant: t holds the turn). */
inline reentrantSends(e, t) {
#ifdef SUBSCRIBER
  if
  :: e == 1 && status == 0 ->
       atomic { assert(holderIs(0, t) && len(queue[0]) < QCAP); look[0] = 1; queue[0]!5,NONE; enter(0, 5) }
#ifdef REENTRANT_TERMINAL
  :: e == 3 ->
       atomic { accepted = (status == 0); if :: accepted -> status = 1 :: else -> skip fi };
       if
       :: accepted -> atomic { assert(holderIs(0, t) && len(queue[0]) < QCAP); look[0] = 1; queue[0]!TERM,NONE; enter(0, TERM) }
       :: else -> skip
       fi;
       /* the passthrough's dispose, from inside the callback: this thread holds the turn, so the
          fence never takes it (and a terminal event was accepted, so nothing may be dropped) */
       disposeStart(t);
       assert(!took)
#endif
  :: else -> skip
  fi
#else
  skip
#endif
}

/* Delivering event e on owner o (holder t). recheck: Subscriber.deliver's status check for a
   value (the holder's look and a turn the fence took); the lock-free take in sendNext calls the
   closure without it. */
inline deliver(o, e, t, recheck) {
#if defined(JOIN)
  perform(e)
#elif defined(SUBJECT)
  subjectPerform(e, t)
#else
  if
  :: o == 0 && SUBSCRIBER_OWNER ->
       if
       :: alive && (e == TERM || !(recheck) || status != 2) ->
            callback(o, e, t);
            reentrantSends(e, t);
            if :: e == TERM -> alive = 0 :: else -> skip fi      /* releaseCallbacks */
       :: else -> skip
       fi
  :: else ->
       callback(o, e, t);
#if defined(RELAY) || defined(RELAY_PLAIN_BLOCK)
       if :: o == 0 -> relayEnqueue(0, e, t) :: else -> skip fi   /* the subscription feeds the relay */
#endif
#ifdef FORWARDER
       if :: o == 0 && e == 2 -> fwdEnqueue(0, 6, t); fwdDrainNested(0, t) :: else -> skip fi
#endif
       skip
  fi
#endif
}

/* ---------------------------------------------------------------- the holder */

/* TurnMachine.look, under the owner's lock: tidy, or take the head entry — deliver (ownerless or
   the holder's own), combine (a waiting thread's, while fewer than BUDGET in this turn), handOff
   (past the budget: the entry stays at the head for its thread) — or release when empty. */
inline lookStep(o, t) {
  lw = NONE; le = NONE;
  if
  :: SUBSCRIBER_OWNER && o == 0 && status == 2 && alive -> look[o] = 1; act = TIDY   /* disposed only */
#ifdef SUBJECT
  :: o == 0 && removal -> look[o] = 1; removalTaken = 1; removal = 0; act = TIDY       /* removals */
#endif
  :: else ->
       if
       :: empty(queue[o]) -> holder[o] = 0; look[o] = 0; act = RELEASED
       :: nempty(queue[o]) ->
            queue[o]?<le,lw>;                           /* peek at the head */
            if
            :: lw == NONE || lw == t -> queue[o]?le,lw; look[o] = nempty(queue[o]); lw = NONE; act = DELIVER
            :: lw != NONE && lw != t && combined < BUDGET ->
                 queue[o]?le,lw; look[o] = nempty(queue[o]);                           /* combine */
                 ownsEntries(o, lw, last); last = !last; act = DELIVER_FOR              /* wake it after its last */
            :: lw != NONE && lw != t && combined >= BUDGET ->
                 holder[o] = lw; look[o] = 1; act = HANDOFF                             /* handOff */
            fi
       fi
  fi
}

/* DeliveryTurn.runHolder's body after a look, outside the lock; `break` leaves the holder loop. */
inline lookAct(o, t) {
  if
  :: act == DELIVER -> deliver(o, le, t, 1)
  :: act == DELIVER_FOR ->
       deliver(o, le, t, 1); combined++;
       if :: last -> wake(lw, DELIVERED) :: else -> skip fi
  :: act == TIDY ->
#ifdef SUBJECT
       if :: removalTaken -> inList = 0; removalTaken = 0 :: else -> skip fi   /* subscribers.remove, detach */
#else
       alive = 0                                         /* releaseCallbacks */
#endif
  :: act == HANDOFF -> wake(lw, HANDED); break
  :: act == RELEASED -> break
  fi
}

/* Subscriber / SubjectStorage finishTurn + look (runHolder with releasesLockFree): give the
   turn up with a CAS unless the look flag is set, else look under the lock and act. */
inline finishTurn(o, t) {
  combined = 0;
  do
  :: atomic { !look[o] -> holder[o] = 0 }; break            /* releaseUnasked */
  :: atomic { look[o] && slock == 0 -> lookStep(o, t) };   /* look, under the owner's lock */
     lookAct(o, t)
  od
}

/* ---------------------------------------------------------------- senders */

/* TurnMachine.arrive after DeliveryTurn.fence, inside the caller's lock step: take a free turn
   (result 1), queue re-entrantly or to break a cycle (result 0), or wait (result 2). */
inline arriveStep(o, e, t) {
  if
  :: holder[o] == 0 -> holder[o] = t; enter(o, e); result = 1                  /* the fence took it */
  :: holder[o] != 0 && holderIs(o, t) ->                                       /* queueReentrant */
       assert(len(queue[o]) < QCAP); look[o] = 1; queue[o]!e,NONE; enter(o, e); result = 0
  :: holder[o] != 0 && !holderIs(o, t) ->
       look[o] = 1;
       assert(len(queue[o]) < QCAP);
       closesCycle(t, holder[o], cyc);
       if
       :: cyc -> queue[o]!e,NONE; enter(o, e); result = 0                       /* queueCycle */
       :: !cyc -> waitsFor[t] = o + 1; queue[o]!e,t; enter(o, e); expects[t] = 1; result = 2   /* wait */
       fi
  fi
}

/* What a sender does after taking or arriving: deliver and finish (1, 3: lock-free take), return
   (0), or wait — delivered for it, or handed the turn with its entry at the head (2). */
inline proceed(o, e, t) {
  if
  :: result == 1 || result == 3 -> chk = (result == 1); deliver(o, e, t, chk); finishTurn(o, t)
  :: result == 2 ->
       waitWake(t, gotTurn);
       if
       :: gotTurn -> assert(holder[o] == t && look[o]); finishTurn(o, t)
       :: !gotTurn ->
#ifdef FORWARDER
          assert(deliveredCount[e] == 1)                              /* returns once delivered */
#else
          skip
#endif
       fi
  :: result == 0 -> skip
  fi
}

/* A send (or subscribe) of event e to owner o by thread t: DeliveryTurn.takeFree (a CAS), else
   the owner's lock: fence + arrive. */
inline send(o, e, t) {
  if
  :: LOCKFREE_SEND -> 
       if
       :: atomic { holder[o] == 0 -> holder[o] = t; enter(o, e) }; result = 3  /* takeFree */
       :: atomic { holder[o] != 0 -> skip };                                    /* the CAS failed */
          atomic { arriveStep(o, e, t) }                                        /* arrive */
       fi
  :: !LOCKFREE_SEND -> atomic { arriveStep(o, e, t) }
  fi;
  proceed(o, e, t)
}

/* ---------------------------------------------------------------- deliver(on:) relays */

/* DeliveryRelay.enqueue with .wait, for value v into relay r by thread t: room, else beyond the
   bound when the sender may not wait (isCurrent, or waiting would close a cycle, or its bounded
   wait ran out and it withdrew: mayWait = false for the rest of the send); else wait for room and
   try again. scheduleIfIdle: RelayDrain.request (idle -> scheduled) and the drain's action queued
   on the relay's queue (after unlocking in Swift: nothing runs it before then here either, as its
   queue's thread is busy or the action is simply not taken yet). */
inline relayEnqueue(r, v, t) {
  timedOut = 0;
  do
  :: atomic {
       rres = 0;
       if
       :: rdisposed[r] -> rres = 3                                                   /* dropped */
       :: !rdisposed[r] && len(rq[r]) < RBOUND -> skip                              /* room */
       :: !rdisposed[r] && len(rq[r]) >= RBOUND && timedOut -> overTimeout[r]++     /* withdrawn after a timeout */
       :: !rdisposed[r] && len(rq[r]) >= RBOUND && !timedOut && isCurrent(t, r) -> overDesigned[r]++  /* holds its scheduler up */
       :: !rdisposed[r] && len(rq[r]) >= RBOUND && !timedOut && !isCurrent(t, r) ->
            relayHolder(r, h); closesCycle(t, h, cyc);                             /* startWaiting(for: self) */
            if
            :: cyc -> overDesigned[r]++                                            /* a cycle */
            :: !cyc -> waitsFor[t] = NQ + r + 1; rwaiters[r] = rwaiters[r] | (1 << t); rres = 2   /* wait */
            fi
       fi;
       if
       :: rres == 0 ->
            assert(len(rq[r]) < RCAP); rq[r]!v;
            assert(len(rq[r]) <= RBOUND + overTimeout[r] + overDesigned[r]);
            if :: drainer[r] == 0 -> drainer[r] = PENDING; rsched[r] = 1 :: else -> skip fi   /* scheduleIfIdle: request, schedule */
       :: else -> skip
       fi }
     if
     :: rres == 2 -> relayWait(r, t)
     :: else -> break
     fi
  od
}

/* The relay sender's wait for room: TurnWaiter.wait(until:). Without UNBOUNDED_WAIT it may time
   out while asleep (the model has no time: the timeout can always fire). Then, under the relay's
   lock, DeliveryRelay.withdraw takes it out of the waiters and TurnWaiter.withdraw puts the word
   back from asleep (a precondition: nobody can wake it now); the send then may not wait any more
   (timedOut). If a drain or dispose took it out first, TurnWaiter.finishTimedWait consumes the
   wake that one is bringing, and the send tries again as after any wake. */
inline relayWait(r, t) {
  if
  :: atomic { ws[t] == HANDED -> ws[t] = 0; waitsFor[t] = 0 }
  :: atomic { ws[t] == DELIVERED -> assert(0) }                 /* relays only hand off */
  :: atomic { ws[t] == 0 -> ws[t] = ASLEEP };
     if
     :: atomic { sem[t] > 0 -> sem[t]-- };
        atomic { assert(ws[t] == HANDED); ws[t] = 0; waitsFor[t] = 0 }
#ifndef UNBOUNDED_WAIT
     :: atomic {                                         /* timed out: DeliveryRelay.withdraw */
          found = (rwaiters[r] >> t) & 1;
          rwaiters[r] = rwaiters[r] & ~(1 << t) };
        if
        :: found ->                                      /* TurnWaiter.withdraw: nobody wakes it now */
             atomic { assert(ws[t] == ASLEEP && sem[t] == 0); ws[t] = 0; waitsFor[t] = 0 };
             timedOut = 1; timeouts++
        :: !found ->                                     /* finishTimedWait: a drain or dispose took it */
#ifndef TIMEOUT_IGNORES_WAKE
             atomic { sem[t] > 0 -> sem[t]-- };
             atomic { assert(ws[t] == HANDED); ws[t] = 0; waitsFor[t] = 0 }
#else
             atomic { ws[t] = 0; waitsFor[t] = 0 }       /* the defect: it leaves without the wake */
#endif
        fi
#endif
     fi
  fi
}

/* What relay r's drain does with value v (the downstream's callbacks), per scenario. */
inline relayDownstream(r, v, t) {
#if defined(RELAYS)
  if
  :: r == 1 -> passed++; relayEnqueue(0, v, t)
  :: r == 0 -> got++; deliveredCount[v]++; assert(deliveredCount[v] == 1)
  fi
#else
  got++; deliveredCount[v + 8]++; assert(deliveredCount[v + 8] == 1);   /* downstream: once each */
#if defined(RELAY)
  if :: v < 5 -> send(0, v + 4, t) :: else -> skip fi                     /* sends back upstream */
#endif
  skip
#endif
}

/* DeliveryRelay.drain, run by thread t as the action on relay r's queue. Its first critical
   section starts it (RelayDrain.start: scheduled -> draining by t; if dispose ended it, the drain
   stops at once); each critical section takes the batch and the waiters, who are woken (handOff)
   after unlocking, then the batch is delivered; once the queue is dry or the relay disposed,
   RelayDrain.finish (idle) under the lock. Every change of `drainer` is under the lock. */
inline relayDrain(r, t) {
  first = 1;
  do
  :: atomic {
       if
       :: first && drainer[r] != PENDING -> dr = 0                /* start(by:) false: not wanted */
       :: else ->
            if :: first -> drainer[r] = t :: else -> skip fi;      /* start(by:) */
            if
            :: !rdisposed[r] && nempty(rq[r]) ->
                 batch = 0;
                 do :: nempty(rq[r]) -> rq[r]?bv[batch]; batch++ :: empty(rq[r]) -> break od;
                 w = rwaiters[r]; rwaiters[r] = 0; dr = 1
            :: else -> drainer[r] = 0; dr = 0                      /* finish */
            fi
       fi;
       first = 0 };
     if
     :: dr == 1 ->
          i = 1;
          do
          :: i < NT -> if :: (w >> i) & 1 -> wake(i, HANDED) :: else -> skip fi; i++
          :: i >= NT -> break
          od;
          k = 0;
          do
          :: k < batch -> relayDownstream(r, bv[k], t); k++
          :: k >= batch -> break
          od
     :: dr == 0 -> break
     fi
  od
}

/* The queue's thread t takes the relay's scheduled action and runs it: ScheduledAction.perform
   records t as the queue's occupant around it (QueueOccupancy.run). */
inline runDrain(r, t) {
  atomic { rsched[r] -> rsched[r] = 0; occupant[r] = t; onq[t] = onq[t] | (1 << r) };
  relayDrain(r, t);
  atomic { occupant[r] = 0; onq[t] = onq[t] & ~(1 << r) }
}

/* DeliveryRelay.dispose: under the lock, disposed, the buffer dropped, a scheduled drain ended
   (RelayDrain.finish), the waiters taken; after unlocking the scheduled action is cancelled —
   unless its queue took it already: it then runs and stops at its start — and the waiters are
   woken (handOff). */
inline relayDispose(r) {
  atomic {
    rdisposed[r] = 1;
    do :: nempty(rq[r]) -> rq[r]?_ :: empty(rq[r]) -> break od;
    if :: drainer[r] == PENDING -> drainer[r] = 0 :: else -> skip fi;
    w = rwaiters[r]; rwaiters[r] = 0 };
  if :: rsched[r] = 0 :: skip fi;                                  /* scheduled?.dispose() */
  i = 1;
  do
  :: i < NT -> if :: (w >> i) & 1 -> wake(i, HANDED) :: else -> skip fi; i++
  :: i >= NT -> break
  od
}

/* ---------------------------------------------------------------- SUBSCRIBER */
#ifdef SUBSCRIBER

/* Subscriber.sendNext: ignored once terminated or disposed (a load), then send. */
inline sendNext(e, t) {
  if :: status != 0 -> skip :: else -> send(0, e, t) fi
}

/* Subscriber.sendCompleted: acceptTerminal, then sendTerminal. */
inline sendCompleted(t) {
  atomic { accepted = (status == 0); if :: accepted -> status = 1 :: else -> skip fi };
  if :: accepted -> send(0, TERM, t) :: else -> skip fi
}

/* Subscriber.dispose, up to its look: set the disposed bit; a no-op once a terminal event was
   accepted; else, under the lock, drop the ownerless entries (keeping the waiters') and fence the
   turn (took: this thread now holds it). */
inline disposeStart(t) {
  took = 0;
  atomic { old = status; status = status | 2 };
  if
  :: old == 0 ->
       atomic {
         n = len(queue[0]);
         do                                   /* dropOwnerless: keep the waiters' entries */
         :: n > 0 -> queue[0]?e2,w2; if :: w2 != NONE -> queue[0]!e2,w2 :: else -> skip fi; n--
         :: n == 0 -> break
         od;
         if
         :: holder[0] == 0 -> holder[0] = t; took = 1                 /* fence took the free turn */
         :: else -> look[0] = 1                                       /* the holder tidies */
         fi }
  :: else -> skip
  fi
}

/* Subscriber.dispose: then, if it took the turn, look (tidy, release) like any holder. */
inline dispose(t) {
  disposeStart(t);
  if
  :: took -> look[0] = 1; finishTurn(0, t)    /* look: the flag only makes the first step a look */
  :: else -> skip
  fi
}

/* Thread 1: values 1, 2 (value 1's callback sends value 5 re-entrantly), then the terminal event
   and the passthrough's dispose (DISPOSE: only the dispose). Thread 2: values 3, 4. With
   REENTRANT_TERMINAL, value 3's callback sends the terminal event and disposes. */
proctype Sender1() {
  LOCALS;
  sendNext(1, 1); sendNext(2, 1);
#if defined(DISPOSE)
  dispose(1);
#elif !defined(REENTRANT_TERMINAL)
  sendCompleted(1); dispose(1);
#endif
  atomic { finished++ }
}
proctype Sender2() {
  LOCALS;
  sendNext(3, 2); sendNext(4, 2);
  atomic { finished++ }
}
#ifdef THREE
proctype Sender3() {
  LOCALS;
  sendNext(6, 3);
  atomic { finished++ }
}
#define SENDERS 3
#else
#define SENDERS 2
#endif
init {
  atomic {
    run Sender1(); run Sender2();
#ifdef THREE
    run Sender3()
#endif
  }
  finished == SENDERS;
  assert(alive == 0 && holder[0] == 0 && empty(queue[0]));
  byte v = 1;
  do :: v < NT -> assert(ws[v] == 0 && sem[v] == 0 && waitsFor[v] == 0); v++ :: else -> break od;
#ifndef DISPOSE
  /* Completeness: every event that entered before the terminal event was delivered, once. */
  assert(entryOf[TERM] == 0 || terminalDelivered);
  v = 1;
  do
  :: v <= 6 ->
       assert(deliveredCount[v] == (entryOf[v] != 0 && (entryOf[TERM] == 0 || entryOf[v] < entryOf[TERM]) -> 1 : 0));
       v++
  :: v > 6 -> break
  od
#endif
}
#endif

/* ---------------------------------------------------------------- SUBJECT */
#ifdef SUBJECT

/* SubjectStorage.perform(.event(e)) for the one subscription: a value unless it has ended; the
   terminal event, then endStream (the list is emptied). */
inline subjectPerform(e, t) {
  if
  :: inList && !subEnded -> callback(0, e, t); if :: e == TERM -> subEnded = 1 :: else -> skip fi
  :: else -> skip
  fi;
  if :: e == TERM -> inList = 0 :: else -> skip fi
}

/* SubjectStorage.send(.next): the lock-free path (no history: `terminated` load, takeFree, the
   `terminated` re-check — ended meanwhile: give the turn up unused), else the locked path. */
inline subjectSendNext(e, t) {
  tl = terminated;
  if
  :: !tl ->
       if
       :: atomic { holder[0] == 0 -> holder[0] = t; enter(0, e) };              /* takeFree */
#ifndef NO_RECHECK
          tl = terminated;                                                          /* the re-check */
#endif
          if
          :: tl -> dropped[e] = 1; finishTurn(0, t)                 /* ended meanwhile: not delivered */
          :: !tl -> deliver(0, e, t, 0); finishTurn(0, t)
          fi
       :: atomic { holder[0] != 0 -> skip };                                       /* the CAS failed */
          subjectSendLocked(e, t)
       fi
  :: tl -> subjectSendLocked(e, t)
  fi
}

/* SubjectStorage.send under the lock: nothing once ended; a terminal event sets `terminal` and
   `terminated`; then arrive. */
inline subjectSendLocked(e, t) {
  atomic {
    slock == 0 -> slock = t;
    if
    :: terminated -> tl = 1; slock = 0
    :: !terminated && e == TERM -> terminated = 1; enter(0, e); tl = 0   /* accepted: terminal, terminated */
    :: !terminated && e != TERM -> tl = 0
    fi };
  /* still under the lock, but a lock-free takeFree may come between the store and the fence */
  if
  :: !tl -> atomic { arriveStep(0, e, t); slock = 0 }; proceed(0, e, t)
  :: tl -> skip
  fi
}

/* SubjectSubscription.dispose: `ended` (exchange), then SubjectStorage.remove: under the lock,
   fence — the turn was free: remove it now and publish 0; else leave it in `removals` for the
   holder's tidy. */
inline subjectRemove(t) {
  atomic { old = subEnded; subEnded = 1 };
  if
  :: !old ->
       atomic {
         slock == 0 ->
         if
         :: holder[0] == 0 -> inList = 0                      /* removed at once; the turn stays free */
         :: holder[0] != 0 -> look[0] = 1; removal = 1        /* removals.append */
         fi }
  :: else -> skip
  fi
}

proctype SubjectSender1() {
  LOCALS;
  subjectSendNext(1, 1);
#ifdef REMOVE
  subjectRemove(1);
#endif
  subjectSendNext(2, 1);
  atomic { finished++ }
}
proctype SubjectSender2() {
  LOCALS;
  subjectSendNext(3, 2);
  subjectSendLocked(TERM, 2);
  atomic { finished++ }
}
init {
  atomic { run SubjectSender1(); run SubjectSender2() }
  finished == 2;
  assert(holder[0] == 0 && empty(queue[0]) && !removal && !inList);
  byte v = 1;
  do :: v < NT -> assert(ws[v] == 0 && sem[v] == 0 && waitsFor[v] == 0); v++ :: else -> break od;
#ifndef REMOVE
  assert(terminalDelivered);
  v = 1;
  do
  :: v <= 3 -> assert(deliveredCount[v] == (entryOf[v] != 0 && !dropped[v] && entryOf[v] < entryOf[TERM] -> 1 : 0)); v++
  :: v > 3 -> break
  od
#endif
}
#endif

/* ---------------------------------------------------------------- CYCLE */
#ifdef CYCLE
/* Owner 0's callback for event 1 sends 5 to owner 1, owner 1's for event 2 sends 6 to owner 0. */
proctype A() {
  LOCALS;
  atomic { holder[0] == 0 -> holder[0] = 1 };
  callback(0, 1, 1);
  send(1, 5, 1);                       /* inside owner 0's callback: A holds owner 0 */
  finishTurn(0, 1);
  atomic { finished++ }
}
proctype B() {
  LOCALS;
  atomic { holder[1] == 0 -> holder[1] = 2 };
  callback(1, 2, 2);
  send(0, 6, 2);                       /* inside owner 1's callback: B holds owner 1 */
  finishTurn(1, 2);
  atomic { finished++ }
}
init {
  atomic { run A(); run B() }
  finished == 2;
  assert(deliveredCount[1] == 1 && deliveredCount[2] == 1 && deliveredCount[5] == 1 && deliveredCount[6] == 1);
  assert(holder[0] == 0 && holder[1] == 0 && empty(queue[0]) && empty(queue[1]));
  assert(ws[1] == 0 && ws[2] == 0 && sem[1] == 0 && sem[2] == 0)
}
#endif

/* ---------------------------------------------------------------- JOIN */
#ifdef JOIN
/* Owner 0 is a ReplaySubject with one subscriber; thread 1 sends values 1..3, thread 2 subscribes
   (event JOINWORK). A value enters the history, and the subscribe snapshots it, when the event
   enters the turn (`enter`); the subscribe's work — join, then replay — runs when delivered,
   by the joiner or by a holder combining it. The joiner must get every value exactly once, in
   order: the replay, then live values. */
inline perform(e) {
  if
  :: e == JOINWORK ->
       i = 0;
       joined = 1;
       do :: i < replayLength -> joinerGot[joinerCount] = history[i]; joinerCount++; i++ :: else -> break od
  :: else ->
       callback(0, e, 0);
       if :: joined -> joinerGot[joinerCount] = e; joinerCount++ :: else -> skip fi
  fi
}
proctype Sender() {
  LOCALS;
  send(0, 1, 1); send(0, 2, 1); send(0, 3, 1);
  atomic { finished++ }
}
proctype Joiner() {
  LOCALS;
  send(0, JOINWORK, 2);
  atomic { finished++ }
}
init {
  atomic { run Sender(); run Joiner() }
  finished == 2;
  assert(joinerCount == 3 && joinerGot[0] == 1 && joinerGot[1] == 2 && joinerGot[2] == 3);
  assert(ws[1] == 0 && ws[2] == 0 && sem[1] == 0 && sem[2] == 0)
}
#endif

/* ---------------------------------------------------------------- FLOOD */
#ifdef FLOOD
/* Thread 1 sends to owner 1 forever; thread 2 sends once and must return. */
proctype Flooder() {
  LOCALS;
  do
  :: send(1, 1, 1)
  od
}
proctype Single() {
  LOCALS;
  send(1, 2, 2);
  returned = 1
}
init {
  atomic { run Flooder(); run Single() }
}
ltl singleSendReturns { <> returned }
#endif

/* ---------------------------------------------------------------- FORWARDER */
#ifdef FORWARDER
/* SerialForwarder.enqueue, under the operator's lock (TurnMachine.enqueue after fence): the entry
   joins the queue, carrying its work, owned by the sender unless it holds the turn (taken free
   now or earlier, or from inside the holder's callback) or the holder is to deliver it. */
inline fwdEnqueue(o, e, t) {
  atomic {
    assert(len(queue[o]) < QCAP);
    if
    :: holder[o] == 0 -> holder[o] = t; look[o] = 1; queue[o]!e,NONE          /* takeFree: holding */
    :: holder[o] == t -> look[o] = 1; queue[o]!e,NONE                          /* holding */
    :: holder[o] != 0 && holder[o] != t ->
         look[o] = 1;
         lastOwnerOf(o, lo);
         if
         :: lo == t -> queue[o]!e,t                                            /* its run goes on */
#ifndef SECOND_OWNED
         :: lo != t && expects[t] -> queue[o]!e,NONE      /* its earlier entry was taken: one wake */
#else
         :: lo != t && expects[t] -> queue[o]!e,t         /* the planted defect: a second owed wake */
#endif
         :: lo != t && !expects[t] ->
              closesCycle(t, holder[o], cyc);
              if
              :: cyc -> queue[o]!e,NONE                                        /* queueCycle */
              :: !cyc -> waitsFor[t] = o + 1; queue[o]!e,t; expects[t] = 1     /* wait */
              fi
         fi
    fi }
}

/* SerialForwarder.look: runHolder without the lock-free release; every look is under the lock
   and sets isLooking while the holder delivers. */
inline fwdLook(o, t) {
  combined = 0;
  do
  :: atomic { lookStep(o, t); isLooking = (act == DELIVER || act == DELIVER_FOR) };
     lookAct(o, t)
  od
}

/* SerialForwarder.drain: an owned entry brings exactly one wake — take it even if the entry was
   delivered already (then go round again); handed the turn, look; else, under the lock, look if
   this thread holds the turn and is not already looking further up its stack. */
inline fwdDrain(o, t) {
  do
  :: expects[t] ->
       waitWake(t, gotTurn);
       if :: gotTurn -> fwdLook(o, t) :: else -> skip fi
  :: !expects[t] ->
       atomic { step = (holder[o] == t && !isLooking) };
       if :: step -> fwdLook(o, t) :: else -> break fi
  od
}

/* The same drain from inside the holder's own callback (the forwarder's events go downstream and
   a downstream callback enqueued into it): it must leave its event to the holder's loop. A look
   here would deliver inside the callback (spin's inlines cannot recurse: asserted instead). */
inline fwdDrainNested(o, t) {
  assert(!expects[t]);                        /* a holder never owes itself a wake */
#ifdef NO_IS_LOOKING
  atomic { step = (holder[o] == t) };
#else
  atomic { step = (holder[o] == t && !isLooking) };
#endif
  assert(!step)                               /* no nested look: callbacks would overlap */
}

proctype F1() {
  LOCALS;
  fwdEnqueue(0, 1, 1);
#ifdef TWICE
  fwdEnqueue(0, 5, 1);       /* a second entry before draining (zip's value + completion) */
#endif
  fwdDrain(0, 1);
  assert(deliveredCount[1] == 1);      /* drain returns once the sender's own event was delivered */
  send(1, 3, 1);
  atomic { finished++ }
}
proctype F2() {
  LOCALS;
  fwdEnqueue(0, 2, 2); fwdDrain(0, 2);
  assert(deliveredCount[2] == 1);
  send(1, 4, 2);
  atomic { finished++ }
}
init {
  atomic { run F1(); run F2() }
  finished == 2;
  assert(deliveredCount[1] == 1 && deliveredCount[2] == 1 && deliveredCount[3] == 1 && deliveredCount[4] == 1);
  assert(deliveredCount[6] == 1);
#ifdef TWICE
  assert(deliveredCount[5] == 1);
#endif
  assert(holder[0] == 0 && holder[1] == 0 && empty(queue[0]) && empty(queue[1]) && !isLooking);
  assert(ws[1] == 0 && ws[2] == 0 && sem[1] == 0 && sem[2] == 0 && !expects[1] && !expects[2]);
  assert(waitsFor[1] == 0 && waitsFor[2] == 0)
}
#endif

/* ---------------------------------------------------------------- RELAY */
#ifdef RELAY
/* Owner 0 is a subject whose subscription feeds relay 0 (on scheduler B, thread 2). */
proctype Producer() {
  LOCALS;
  send(0, 1, 1); send(0, 2, 1);
  atomic { finished++ }
}
/* Scheduler B's thread: runs the relay's scheduled drains; the downstream's callback sends values
   1 and 2 back into the subject as 5 and 6. */
proctype SchedulerB() {
  LOCALS;
  do
  :: got == 4 -> break
  :: runDrain(0, 2)
  od;
  atomic { finished++ }
}
init {
  atomic { run Producer(); run SchedulerB() }
  finished == 2;
  assert(deliveredCount[9] == 1 && deliveredCount[10] == 1 && deliveredCount[13] == 1 && deliveredCount[14] == 1);
  assert(holder[0] == 0 && empty(queue[0]) && drainer[0] == 0 && rwaiters[0] == 0);
  assert(ws[1] == 0 && ws[2] == 0 && sem[1] == 0 && sem[2] == 0 && waitsFor[1] == 0 && waitsFor[2] == 0);
  assert(overTimeout[0] <= timeouts)
}
#endif

/* ---------------------------------------------------------------- RELAY_PLAIN_BLOCK */
#ifdef RELAY_PLAIN_BLOCK
/* Owner 0 is a subject whose subscription feeds relay 0 on queue q. Thread 1 (not on q) sends
   values 1 and 2 into the subject. Thread 2 is q's thread: a plain block (`q.async`, not a Ripple
   action, so not q's recorded occupant, but current for q's scheduler) sends value 3 into the
   subject; the relay's drains queue up behind it. */
proctype Sender() {
  LOCALS;
  send(0, 1, 1); send(0, 2, 1);
  atomic { finished++ }
}
proctype QueueQ() {
  LOCALS;
  onq[2] = 1;                          /* the plain block: on q, occupant[0] stays 0 */
  send(0, 3, 2);
  onq[2] = 0;
  do
  :: got == 3 -> break
  :: rdisposed[0] -> break             /* a scheduled drain not yet run is cancelled, or stops at its start */
  :: runDrain(0, 2)
  od;
  atomic { finished++ }
}
#ifdef DISPOSE
/* DISPOSE: thread 3 disposes the relay at any moment (the subscription ends). */
proctype Disposer() {
  LOCALS;
  relayDispose(0);
  atomic { finished++ }
}
#define RELAY_THREADS 3
#else
#define RELAY_THREADS 2
#endif
init {
  atomic {
    run Sender(); run QueueQ()
#ifdef DISPOSE
    ; run Disposer()
#endif
  }
  finished == RELAY_THREADS;
#ifndef DISPOSE
  assert(deliveredCount[9] == 1 && deliveredCount[10] == 1 && deliveredCount[11] == 1);
#endif
  assert(ws[3] == 0 && sem[3] == 0);
  assert(drainer[0] == 0);                             /* dispose ends a drain that has not started */
  assert(holder[0] == 0 && empty(queue[0]) && rwaiters[0] == 0);
  assert(ws[1] == 0 && ws[2] == 0 && sem[1] == 0 && sem[2] == 0 && waitsFor[1] == 0 && waitsFor[2] == 0);
  assert(overTimeout[0] <= timeouts)
}
#endif

/* ---------------------------------------------------------------- RELAY_TARGET */
#ifdef RELAY_TARGET
/* Relay 0's queue q targets queue p. Thread 1 is p's thread: a block on p (not on q: not current
   for q's scheduler, and not recorded in q's occupancy) sends values 1, 2, 3 into the relay; q's
   blocks, the relay's drains among them, run on p after it. */
proctype QueueP() {
  LOCALS;
  relayEnqueue(0, 1, 1); relayEnqueue(0, 2, 1); relayEnqueue(0, 3, 1);
  do
  :: got == 3 -> break
  :: runDrain(0, 1)
  od;
  atomic { finished++ }
}
init {
  atomic { run QueueP() }
  finished == 1;
  assert(deliveredCount[9] == 1 && deliveredCount[10] == 1 && deliveredCount[11] == 1);
  assert(drainer[0] == 0 && rwaiters[0] == 0 && ws[1] == 0 && sem[1] == 0 && waitsFor[1] == 0);
  assert(overDesigned[0] == 0 && overTimeout[0] <= timeouts)
}
#endif

/* ---------------------------------------------------------------- RELAYS */
#ifdef RELAYS
/* Thread 1 runs scheduler A: an action (recorded: QueueOccupancy) sending 1..4 into relay 1 on B,
   then relay 0's drains. */
proctype SchedulerA() {
  LOCALS;
  atomic { occupant[0] = 1; onq[1] = 1 };
  relayEnqueue(1, 1, 1); relayEnqueue(1, 2, 1); relayEnqueue(1, 3, 1); relayEnqueue(1, 4, 1);
  atomic { occupant[0] = 0; onq[1] = 0 };
  do
  :: got == 4 -> break
  :: runDrain(0, 1)
  od;
  atomic { finished++ }
}
/* Thread 2 runs scheduler B: relay 1's drains, delivering into relay 0. */
proctype SchedulerB() {
  LOCALS;
  do
  :: passed == 4 && drainer[1] == 0 -> break
  :: runDrain(1, 2)
  od;
  atomic { finished++ }
}
init {
  atomic { run SchedulerA(); run SchedulerB() }
  finished == 2;
  assert(got == 4 && deliveredCount[1] == 1 && deliveredCount[2] == 1 && deliveredCount[3] == 1 && deliveredCount[4] == 1);
  assert(drainer[0] == 0 && drainer[1] == 0 && rwaiters[0] == 0 && rwaiters[1] == 0);
  assert(ws[1] == 0 && ws[2] == 0 && sem[1] == 0 && sem[2] == 0 && waitsFor[1] == 0 && waitsFor[2] == 0);
  assert(overTimeout[0] + overTimeout[1] <= timeouts)
}
#endif
