/**
 * Symbol servers that misbehave, for the fuzzer's `server` target: two servers on 127.0.0.1 (a
 * front one, and another host for redirects), speaking HTTP/1.1 by hand over TCP so that an
 * answer can lie about its length, end in the middle or be reset. Each input sets how they
 * answer (a {@link Misbehaviour}) and the body they serve; between inputs every answered
 * connection is ended, so nothing of one input reaches the next. Every loop that sends is bounded.
 */
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";

/** How the servers answer a request for a `.sym` file (a `.pdb` is always 404 but for `fail` and `stall`). */
export const MISBEHAVIOURS = [
  /** The body, with its length. */
  "plain",
  /** The body gzip-compressed, as a store may keep it. */
  "gzip",
  /** One byte every 5 ms. */
  "drip",
  /** Headers, then nothing. */
  "stall",
  /** A chunked body that repeats the file without end (up to 4,096 chunks). */
  "endless",
  /** A gzip member inflating to 8 MiB of zeros, sent again and again (up to 256 times: 2 GiB). */
  "bomb",
  /** `Content-Encoding: gzip` on bytes that are not gzip. */
  "bad-gzip",
  /** A Content-Length larger than the body, then the end of the connection. */
  "long-length",
  /** A Content-Length smaller than the body, then the rest of it. */
  "short-length",
  /** Half the body, then a TCP reset. */
  "reset",
  /** 503 or 429. */
  "fail",
  /** A redirect to the other server, which serves the body. */
  "redirect-other",
  /** A redirect to itself, again and again. */
  "redirect-loop",
  /** A redirect to a file: URL, or to a path that climbs out of the cache. */
  "redirect-hostile",
  /** A status line or headers that are not HTTP. */
  "garbage",
] as const;

export type Misbehaviour = (typeof MISBEHAVIOURS)[number];

export interface HostileServers {
  /** The front server's URL (what the symbol path names). */
  front: string;
  /** The other server's URL (another host for redirects). */
  other: string;
  /** How the next requests are answered, and the file served. */
  set(behaviour: Misbehaviour, body: Uint8Array): void;
  /**
   * Ends every connection that was answered, and its timers. A connection the client opened
   * ahead and has not used yet stays: ending it as the client takes it up would fail a request
   * of the next input for a reason of the harness's making.
   */
  quiet(): void;
}

/** 8 MiB of zeros, gzip-compressed (about 8 KiB), made once. */
let bombMember: Buffer | undefined;

let started: Promise<HostileServers> | undefined;

/** The two servers of this process, started on first use. */
export function hostileServers(): Promise<HostileServers> {
  started ??= start();
  return started;
}

async function start(): Promise<HostileServers> {
  /** Connections that were answered (a connection the client opened ahead and has not used is left open). */
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let behaviour: Misbehaviour = "plain";
  let body: Uint8Array = new Uint8Array(0);
  let front = "";
  let other = "";

  const head = (status: string, headers: Record<string, string | number>): string =>
    `HTTP/1.1 ${status}\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("")}connection: close\r\n\r\n`;

  /** Writes `chunks()` while the client reads, at most `most` of them, then ends. */
  const pump = (socket: Socket, most: number, chunk: (i: number) => Buffer | string, end: string | undefined): void => {
    let i = 0;
    const go = (): void => {
      while (i < most && !socket.destroyed) {
        if (!socket.write(chunk(i++))) return void socket.once("drain", go);
      }
      if (socket.destroyed) return;
      if (end === undefined) socket.end();
      else socket.end(end);
    };
    go();
  };

  const answer = (socket: Socket, path: string, fromOther: boolean): void => {
    const sym = path.endsWith(".sym");
    const mode: Misbehaviour = fromOther ? "plain" : behaviour;
    const data = Buffer.from(body);
    if (mode === "fail") return void socket.end(head(path.length % 2 === 0 ? "503 Service Unavailable" : "429 Too Many Requests", { "content-length": 0 }));
    if (mode === "stall") return void socket.write(head("200 OK", { "content-length": data.length }));
    if (mode === "garbage") return void socket.end(`HTTP/1.1 2OO OK\r\ncontent-length: -5\r\n\x00\x01\r\n\r\n${data.toString("latin1").slice(0, 64)}`);
    if (!sym) return void socket.end(head("404 Not Found", { "content-length": 0 }));
    switch (mode) {
      case "plain":
        return void socket.end(Buffer.concat([Buffer.from(head("200 OK", { "content-length": data.length })), data]));
      case "gzip": {
        const packed = gzipSync(data);
        return void socket.end(Buffer.concat([Buffer.from(head("200 OK", { "content-length": packed.length, "content-encoding": "gzip" })), packed]));
      }
      case "drip": {
        socket.write(head("200 OK", { "content-length": data.length }));
        let i = 0;
        const timer = setInterval(() => {
          if (socket.destroyed || i >= data.length || i >= 2000) {
            clearInterval(timer);
            timers.delete(timer);
            if (!socket.destroyed) socket.end();
            return;
          }
          socket.write(data.subarray(i, ++i));
        }, 5);
        timers.add(timer);
        return;
      }
      case "endless": {
        socket.write(head("200 OK", { "transfer-encoding": "chunked" }));
        const piece = data.length > 0 ? data : Buffer.from("MODULE ");
        return pump(socket, 4096, () => `${piece.length.toString(16)}\r\n${piece.toString("latin1")}\r\n`, "0\r\n\r\n");
      }
      case "bomb": {
        bombMember ??= gzipSync(Buffer.alloc(8 << 20), { level: 9 });
        const member = bombMember;
        socket.write(head("200 OK", { "content-encoding": "gzip", "content-length": member.length * 256 }));
        return pump(socket, 256, () => member, undefined);
      }
      case "bad-gzip":
        return void socket.end(Buffer.concat([Buffer.from(head("200 OK", { "content-length": data.length, "content-encoding": "gzip" })), data]));
      case "long-length":
        return void socket.end(Buffer.concat([Buffer.from(head("200 OK", { "content-length": data.length * 2 + 100 })), data]));
      case "short-length":
        return void socket.end(Buffer.concat([Buffer.from(head("200 OK", { "content-length": data.length >> 1 })), data]));
      case "reset":
        socket.write(Buffer.concat([Buffer.from(head("200 OK", { "content-length": data.length })), data.subarray(0, data.length >> 1)]));
        return void socket.resetAndDestroy();
      case "redirect-other":
        return void socket.end(head("302 Found", { location: `${other}${path}`, "content-length": 0 }));
      case "redirect-loop":
        return void socket.end(head("302 Found", { location: path, "content-length": 0 }));
      case "redirect-hostile":
        return void socket.end(head("301 Moved Permanently", { location: path.length % 2 === 0 ? "file:///etc/passwd" : "../../../../../../tmp/hostile.sym", "content-length": 0 }));
    }
  };

  const serve = (fromOther: boolean): Server =>
    createServer((socket) => {
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => undefined);
      let request = "";
      let answered = false;
      socket.on("data", (d: Buffer) => {
        if (answered) return;
        request += d.toString("latin1");
        const end = request.indexOf("\r\n\r\n");
        if (end < 0) {
          if (request.length > 16_384) socket.destroy();
          return;
        }
        answered = true;
        sockets.add(socket);
        answer(socket, request.slice(0, request.indexOf("\r\n")).split(" ")[1] ?? "/", fromOther);
      });
    });

  const listen = async (server: Server): Promise<string> => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    server.unref();
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  front = await listen(serve(false));
  other = await listen(serve(true));
  return {
    front,
    other,
    set(b, bytes) {
      behaviour = b;
      body = bytes;
    },
    quiet() {
      for (const t of timers) clearInterval(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
  };
}
