package dev.taskplans.client;

/** One {@code google.rpc.BadRequest} field violation: which request field, and what is wrong with it. */
public record FieldViolation(String field, String description) {}
