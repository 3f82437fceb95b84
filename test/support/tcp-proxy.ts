import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a server, which can partition the network silently: `blackhole()` stops
 * forwarding in both directions without closing anything (as a dropped route or a dead switch
 * does: no reset, no FIN, just silence); `heal()` forwards again, and what was held back is sent
 * on, as TCP retransmits it when a real network returns.
 */
export class TcpProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private silent = false;
  private readonly held: Array<() => void> = [];

  constructor(private readonly target: { host: string; port: number }) {}

  /** The port to connect to instead of the target's. */
  port = 0;

  async start(): Promise<this> {
    this.server = createServer((client) => {
      const upstream = createConnection(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      this.forward(client, upstream);
      this.forward(upstream, client);
      // A close is news that a silent network does not carry either, until it heals.
      client.on('close', () => this.pass(() => upstream.destroy()));
      upstream.on('close', () => this.pass(() => client.destroy()));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
    return this;
  }

  /** Every byte from now on is held back; new connections are accepted and hear nothing either. */
  blackhole(): void {
    this.silent = true;
  }

  /** Forwards again, first what was held back, in order. */
  heal(): void {
    this.silent = false;
    for (const send of this.held.splice(0)) send();
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private forward(from: Socket, to: Socket): void {
    from.on('data', (chunk: Buffer) => this.pass(() => to.write(chunk)));
  }

  private pass(send: () => void): void {
    if (this.silent) this.held.push(send);
    else send();
  }
}
