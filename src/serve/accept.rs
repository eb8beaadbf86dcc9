//! The accept loop: each connection served by hyper's HTTP/1.1 with a deadline for every
//! request head (`--read-timeout`: axum's own `serve` installs no timer, so hyper's
//! head timeout is inert there and a client that dribbles a request head holds its
//! connection for ever), `TCP_NODELAY`, and a graceful stop: the listener closes, the
//! connections finish the requests in flight and close.

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::time::Duration;
use tokio::net::TcpListener;

/// Serves `router` on `listener` until `stop` ends, then waits for the connections'
/// requests in flight (at most `drain`).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    read_timeout: Duration,
    drain: Duration,
    stop: impl Future<Output = ()>,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(read_timeout)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    tokio::pin!(stop);
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // Out of file descriptors and the like: the next accept may work.
                    tracing::warn!("flowboost: serve: accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        // Without TCP_NODELAY a response written while the previous one is
        // unacknowledged (pipelined requests, a body in several writes) waits for the
        // client's delayed ACK, up to 40 ms.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("flowboost: serve: TCP_NODELAY: {e}");
        }
        let service = TowerToHyperService::new(router.clone());
        let connection = graceful.watch(http.serve_connection(TokioIo::new(tcp), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("flowboost: serve: a connection ended: {e}");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(drain, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            "flowboost: serve: connections still open {} s after the stop: closing them",
            drain.as_secs()
        );
    }
}
