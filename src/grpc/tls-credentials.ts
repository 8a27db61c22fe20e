import { experimental, ServerCredentials } from "@grpc/grpc-js";
import type { TlsMaterial, TlsSource } from "@taskplans/tls";

type CertificateProvider = Parameters<typeof experimental.createCertificateProviderServerCredentials>[0];
type IdentityListener = Parameters<CertificateProvider["addIdentityCertificateListener"]>[0];
type CaListener = Parameters<CertificateProvider["addCaCertificateListener"]>[0];

/**
 * Server credentials for `tls` (null: plaintext). The served certificate follows the source: a
 * rotated one is used for new connections while established ones keep theirs. With a client CA,
 * clients must present a certificate it signed (mTLS).
 */
export function serverCredentials(tls: TlsSource | null): ServerCredentials {
  if (!tls) return ServerCredentials.createInsecure();
  const provider = providerOf(tls);
  const mutual = tls.current().clientCa !== null;
  return experimental.createCertificateProviderServerCredentials(provider, mutual ? provider : null, mutual);
}

// grpc-js asks a provider for identity and CA updates separately; both come from the one source,
// which only ever passes on material that was checked, so grpc-js never sees a bad pair.
function providerOf(tls: TlsSource): CertificateProvider {
  const removals = new Map<IdentityListener | CaListener, () => void>();
  const identity = (material: TlsMaterial) => ({ certificate: material.cert, privateKey: material.key });
  const ca = (material: TlsMaterial) => ({ caCertificate: material.clientCa ?? Buffer.alloc(0) });
  // The first update is delivered after the call: grpc-js registers its own watcher only after
  // adding these listeners, and an update it has not heard would leave the port refusing connections.
  const listen = <L extends IdentityListener | CaListener>(listener: L, update: (m: TlsMaterial) => void) => {
    queueMicrotask(() => update(tls.current()));
    removals.set(listener, tls.onChange(update));
  };
  const remove = (listener: IdentityListener | CaListener) => {
    removals.get(listener)?.();
    removals.delete(listener);
  };
  return {
    addIdentityCertificateListener: (listener) => listen(listener, (m) => listener(identity(m))),
    removeIdentityCertificateListener: remove,
    addCaCertificateListener: (listener) => listen(listener, (m) => listener(ca(m))),
    removeCaCertificateListener: remove,
  };
}
