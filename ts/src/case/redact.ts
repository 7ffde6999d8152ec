/**
 * Redacting a thread before it is saved (spec/case-format.md, "Secrets"), as
 * `threads_cases/case/redact.py` does: every secret of the events and of the artifacts is
 * replaced by its placeholder; artifact ids, sandbox sha256 and sizes follow the redacted
 * bytes; a `model_requested` whose `request_sha256` was the hash of the request its state
 * asks for gets the hash of the redacted state's request.
 */

import { Reducer, type Envelope } from "../core/reducer.js";
import type { JsonObject, JsonValue } from "../core/strictjson.js";
import { buildRequest, requestSha256 } from "../reference/request.js";
import { ArtifactStore } from "../reference/runtime.js";
import { sha256Hex } from "../reference/sandbox.js";
import { redactBytes, redactValue } from "./secrets.js";

/** Redacted copies of `events` (canonical envelopes) and of the artifact store. */
export function redactEvents(events: readonly Envelope[], store: ArtifactStore): { events: Envelope[]; store: ArtifactStore } {
  const remap = new Map<string, [string, number]>();
  const blobs = new Map(store.blobs);
  for (const [sha, data] of store.blobs) {
    const raw = redactBytes(data);
    if (raw !== data && Buffer.compare(Buffer.from(raw), Buffer.from(data)) !== 0) {
      const h = sha256Hex(raw);
      remap.set(sha, [h, raw.length]);
      blobs.set(h, raw);
    }
  }
  const out: Envelope[] = [];
  const before = new Reducer();
  const after = new Reducer();
  for (const ev of events) {
    const data = redactValue(ev.data as JsonValue) as JsonObject;
    if (ev.type === "artifact_added") {
      const old = String(data["artifact_id"]).replace(/^sha256:/, "");
      const moved = remap.get(old);
      if (moved !== undefined) {
        data["artifact_id"] = "sha256:" + moved[0];
        data["size"] = moved[1];
      }
    } else if ((ev.type === "sandbox_read" || ev.type === "sandbox_wrote") && remap.has(data["sha256"] as string)) {
      const [sha, size] = remap.get(data["sha256"] as string) as [string, number];
      data["sha256"] = sha;
      data["size"] = size;
      if (data["artifact"]) data["artifact"] = "sha256:" + sha;
    } else if (ev.type === "model_requested" && data["request_sha256"] === requestSha256(buildRequest(before.state))) {
      data["request_sha256"] = requestSha256(buildRequest(after.state));
    }
    const next = { ...ev, data } as Envelope;
    before.apply(ev);
    after.apply(next);
    out.push(next);
  }
  return { events: out, store: new ArtifactStore(blobs) };
}
