package minikafka.compat;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.function.BooleanSupplier;

import org.apache.kafka.common.KafkaFuture;

/** Assertions that end a scenario with a reason. */
final class Check {
    private Check() {}

    static void that(boolean ok, String fmt, Object... args) {
        if (!ok) {
            throw new AssertionError(String.format(fmt, args));
        }
    }

    static void eq(Object want, Object got, String what) {
        if (want == null ? got != null : !want.equals(got)) {
            throw new AssertionError(what + ": got " + got + ", want " + want);
        }
    }

    /** get waits for a future; an ExecutionException is unwrapped. */
    static <T> T get(KafkaFuture<T> f) throws Exception {
        try {
            return f.get(30, java.util.concurrent.TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception) {
                throw (Exception) e.getCause();
            }
            throw e;
        }
    }

    /** fails expects f to fail with an exception of class want. */
    static void fails(KafkaFuture<?> f, Class<? extends Throwable> want, String what) throws Exception {
        try {
            f.get(30, java.util.concurrent.TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (!want.isInstance(e.getCause())) {
                throw new AssertionError(what + ": failed with " + e.getCause() + ", want " + want.getSimpleName(), e.getCause());
            }
            return;
        }
        throw new AssertionError(what + ": succeeded, want " + want.getSimpleName());
    }

    static void waitFor(String what, Duration max, BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + max.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(50);
        }
    }

    static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder(String.valueOf(t));
        for (Throwable c = t.getCause(); c != null && c != t; c = c.getCause()) {
            sb.append(" <- ").append(c);
            t = c;
        }
        return sb.toString();
    }
}
