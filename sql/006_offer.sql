-- tarry-queue/postgres, migration 6: offer() writes its new items in one set-based INSERT.
--
-- Apply with `queue.migrate()`, or `psql -v schema=tarry -f 006_offer.sql` after 005.
--
-- The offer of 001 ran one INSERT per item from a loop, and looked the head up in a second
-- function: at 10^4 items an offer spent most of its time in the loop. Now every item whose id
-- is new goes in with one INSERT … SELECT FROM unnest(…) ON CONFLICT DO NOTHING, and only the
-- items that met an item of the same id (in the table, or earlier in the same call) take the
-- loop of 001, in the call's order: a later item still meets what an earlier one left. Each
-- item's seq is drawn in the call's order before anything is written, so FIFO among equal
-- deadlines follows the call whichever path an item takes. The head is looked up here as
-- tell_head does (an item this call wrote is now the earliest: NOTIFY, sent at commit), without
-- the second function call.

CREATE OR REPLACE FUNCTION :"schema".offer(q text, ids bytea[], vals text[], kinds "char"[], ms float8[],
  modes "char"[], elapsed float8)
RETURNS TABLE (head float8, at float8) LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE
  t float8 := clock();
  first bigint := nextval('seq');
  n int := coalesce(array_length(ids, 1), 0);
  seqs bigint[];
  placed int;
  todo int[];
  d float8;
  i int;
  hd float8;
  hs bigint;
BEGIN
  IF n = 1 THEN
    seqs := ARRAY[nextval('seq')];
  ELSE
    seqs := ARRAY(SELECT nextval('seq') FROM generate_series(1, n));
  END IF;
  INSERT INTO items (queue, id, state, deadline, seq, value)
    SELECT q, u.id, 'p', CASE u.kind WHEN 'd' THEN t - elapsed + u.ms ELSE u.ms END, seqs[u.i], u.val
      FROM unnest(ids, vals, kinds, ms) WITH ORDINALITY AS u(id, val, kind, ms, i)
    ON CONFLICT (queue, id) DO NOTHING;
  GET DIAGNOSTICS placed = ROW_COUNT;
  -- The items not placed met an item of their id: each in order, by its ifExists.
  IF placed < n THEN
    todo := ARRAY(SELECT u.i FROM unnest(seqs) WITH ORDINALITY AS u(s, i)
      WHERE NOT EXISTS (SELECT 1 FROM items x WHERE x.queue = q AND x.id = ids[u.i] AND x.seq = u.s)
      ORDER BY u.i);
    FOREACH i IN ARRAY todo LOOP
      d := CASE kinds[i] WHEN 'd' THEN t - elapsed + ms[i] ELSE ms[i] END;
      IF modes[i] = 'k' THEN
        INSERT INTO items AS x (queue, id, state, deadline, seq, value)
          VALUES (q, ids[i], 'p', d, seqs[i], vals[i]) ON CONFLICT (queue, id) DO NOTHING;
      ELSIF modes[i] = 'e' THEN
        INSERT INTO items AS x (queue, id, state, deadline, seq, value)
          VALUES (q, ids[i], 'p', d, seqs[i], vals[i])
          ON CONFLICT (queue, id) DO UPDATE SET
            value = excluded.value,
            deadline = CASE WHEN x.state = 'p' THEN greatest(x.deadline, excluded.deadline) ELSE excluded.deadline END,
            seq = CASE WHEN x.state = 'p' AND x.deadline >= excluded.deadline THEN x.seq ELSE excluded.seq END,
            attempt = CASE WHEN x.state = 'p' THEN x.attempt ELSE 0 END,
            state = 'p', token = NULL, expiry = NULL, reason = NULL, died = NULL, schedule = NULL;
      ELSE
        INSERT INTO items AS x (queue, id, state, deadline, seq, value)
          VALUES (q, ids[i], 'p', d, seqs[i], vals[i])
          ON CONFLICT (queue, id) DO UPDATE SET
            value = excluded.value, deadline = excluded.deadline, seq = excluded.seq, attempt = 0,
            state = 'p', token = NULL, expiry = NULL, reason = NULL, died = NULL, schedule = NULL;
      END IF;
    END LOOP;
  END IF;
  SELECT i.deadline, i.seq INTO hd, hs FROM items i WHERE i.queue = q AND i.state = 'p'
    ORDER BY i.deadline, i.seq LIMIT 1;
  IF hs >= first THEN PERFORM pg_notify('tarry.' || current_schema(), 'h ' || hd || ' ' || q); END IF;
  RETURN QUERY SELECT hd, t;
END $$;

INSERT INTO :"schema".migrations (version) VALUES (6);
