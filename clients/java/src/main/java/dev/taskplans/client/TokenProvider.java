package dev.taskplans.client;

/**
 * The bearer token to send now. The client asks before every attempt of every call (and before every
 * (re)opening of a watch), so a provider that refreshes ahead of expiry keeps calls working. When it
 * throws, the call fails with a {@link TaskPlansException} {@code UNAUTHENTICATED} with no reason,
 * which is not retried.
 */
@FunctionalInterface
public interface TokenProvider {
  /** The current token (without the {@code Bearer } prefix). */
  String token() throws Exception;
}
