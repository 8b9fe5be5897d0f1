# karplint in a container: a static (musl) build on Alpine, in a small Alpine image.
#
#   docker build -t karplint .
#   docker run --rm -v "$PWD:/work" karplint manifests/
#   helm template my-release ./chart | docker run --rm -i karplint -
#
# The working directory is /work: mount the repository there. The release workflow builds
# and publishes this image for linux/amd64 and linux/arm64.
FROM rust:1.89-alpine AS build
RUN apk add --no-cache musl-dev
WORKDIR /src
COPY . .
RUN cargo build --release --locked && strip target/release/karplint

FROM alpine:3.20
COPY --from=build /src/target/release/karplint /usr/local/bin/karplint
WORKDIR /work
ENTRYPOINT ["karplint"]
CMD ["."]
