"""Response encoding shared by the API handlers: JSON as the reference writes it, text errors."""

from __future__ import annotations

from typing import Any

from litestar import Response

from gocompat import jsonesc
from svc.query.engine import ScanStats

__all__ = ["json_response", "stats_object", "success_envelope", "text_response"]


def json_response(payload: Any, status: int = 200) -> Response[bytes]:
    """JSON body as Go's encoder writes it (HTML-safe escaping), with a trailing newline."""
    body = jsonesc.encode(payload) + b"\n"
    return Response(body, status_code=status, media_type="application/json")


def success_envelope(data: Any, stats: ScanStats) -> dict[str, Any]:
    """``{"status": "success", "warnings": [...], "data": ...}``, warnings only when there
    are any (the reference's order)."""
    envelope: dict[str, Any] = {"status": "success"}
    if stats.warnings:
        envelope["warnings"] = list(stats.warnings)
    envelope["data"] = data
    return envelope


def text_response(message: str, status: int) -> Response[bytes]:
    """Plain-text body, no trailing newline, nosniff (the query endpoints' error shape)."""
    return Response(
        message.encode(),
        status_code=status,
        media_type="text/plain",
        headers={"X-Content-Type-Options": "nosniff"},
    )


def _chunk_stats(rows: int, line_bytes: int, compressed: int, head: bool) -> dict[str, int]:
    return {
        "headChunkBytes": line_bytes if head else 0,
        "headChunkLines": rows if head else 0,
        "decompressedBytes": 0 if head else line_bytes,
        "decompressedLines": 0 if head else rows,
        "compressedBytes": compressed,
        "totalDuplicates": 0,
        "postFilterLines": 0,
        "headChunkStructuredMetadataBytes": 0,
        "decompressedStructuredMetadataBytes": 0,
    }


def _store_stats(chunk: dict[str, int], chunks: int, downloaded: int) -> dict[str, Any]:
    return {
        "totalChunksRef": chunks,
        "totalChunksDownloaded": downloaded,
        "chunksDownloadTime": 0,
        "queryReferencedStructuredMetadata": False,
        "chunk": chunk,
        "chunkRefsFetchTime": 0,
        "congestionControlLatency": 0,
        "pipelineWrapperFilteredLines": 0,
    }


def _cache_stats() -> dict[str, int]:
    return {
        "entriesFound": 0,
        "entriesRequested": 0,
        "entriesStored": 0,
        "bytesReceived": 0,
        "bytesSent": 0,
        "requests": 0,
        "downloadTime": 0,
        "queryLengthServed": 0,
    }


def stats_object(stats: ScanStats) -> dict[str, Any]:
    """The ``data.stats`` object: files count as store chunks, the head as ingester chunks."""
    total_lines = stats.file_rows + stats.head_rows
    total_bytes = stats.file_line_bytes + stats.head_line_bytes
    seconds = stats.exec_seconds
    head_chunk = _chunk_stats(stats.head_rows, stats.head_line_bytes, 0, head=True)
    return {
        "summary": {
            "bytesProcessedPerSecond": int(total_bytes / seconds) if seconds else 0,
            "linesProcessedPerSecond": int(total_lines / seconds) if seconds else 0,
            "totalBytesProcessed": total_bytes,
            "totalLinesProcessed": total_lines,
            "execTime": seconds,
            "queueTime": stats.queue_seconds,
            "subqueries": 0,
            "totalEntriesReturned": stats.returned,
            "splits": 0,
            "shards": stats.shards,
            "totalPostFilterLines": stats.returned,
            "totalStructuredMetadataBytesProcessed": 0,
        },
        "querier": {
            "store": _store_stats(
                _chunk_stats(stats.file_rows, stats.file_line_bytes, stats.file_bytes, head=False),
                stats.files,
                stats.files,
            )
        },
        "ingester": {
            "totalReached": 1 if stats.head_rows else 0,
            "totalChunksMatched": 1 if stats.head_rows else 0,
            "totalBatches": 1 if stats.head_rows else 0,
            "totalLinesSent": stats.head_rows,
            "store": _store_stats(head_chunk, 0, 0),
        },
        "cache": {
            name: _cache_stats()
            for name in (
                "chunk",
                "index",
                "result",
                "statsResult",
                "volumeResult",
                "seriesResult",
                "labelResult",
                "instantMetricResult",
            )
        },
        "index": {
            "totalChunks": stats.files,
            "postFilterChunks": stats.files,
            "shardsDuration": 0,
            "usedBloomFilters": False,
        },
    }
