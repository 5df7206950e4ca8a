# A small minikafka image: FROM scratch, nothing in it but the static binary,
# so there is no base image to download. Build the binary first, then the
# image (the build context holds only the binary, see .dockerignore):
#
#   CGO_ENABLED=0 go build -trimpath -ldflags=-s -o minikafka ./cmd/minikafka
#   docker build -t minikafka .
#   docker run --rm -p 9092:9092 minikafka
#
# Flags go after the image name or into MINIKAFKA_* variables (every flag has
# one: -advertise is MINIKAFKA_ADVERTISE). Clients outside the container dial
# what the broker advertises, localhost:9092 by default. The image has no CA
# certificates: forwarding to an upstream over TLS needs them mounted.
FROM scratch
COPY minikafka /minikafka
ENV MINIKAFKA_DATA=/data
VOLUME /data
EXPOSE 9092
ENTRYPOINT ["/minikafka"]
