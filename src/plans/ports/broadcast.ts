/**
 * A channel every replica hears (Redis pub/sub when replicas share Redis): best effort, so a message
 * may be lost (a node down, a reconnect) and listeners must treat it as a hint, never as the truth.
 */
export interface Broadcast {
  /** Sends `message` to the listeners of every replica, this one's included. Never throws. */
  publish(message: string): void;
  /** Calls `onMessage` for every message any replica publishes from now on. */
  listen(onMessage: (message: string) => void): void;
  close(): Promise<void>;
}
