// mp4_writer.h: writes RGB24 frames as a lossless, reproducible MP4 (H.264 High 4:4:4, RGB) through libavformat/libavcodec.
#pragma once

#include <string>

#include "video_frames.h"

namespace fuseproof::e2e {

/// Encodes with libx264rgb at qp 0 (lossless: decoding gives back the exact RGB24 pixels), one encoder thread,
/// AV_CODEC_FLAG_BITEXACT and AVFMT_FLAG_BITEXACT (no version strings, no creation time), and drops x264's SEI
/// (its version and options string) with the filter_units bitstream filter. Same frames + same FFmpeg/x264 build
/// = same bytes. Returns the encoder identity recorded beside the container SHA-256; throws std::runtime_error.
std::string write_mp4(const std::string& path, const VideoFrames& frames, int fps);

/// The encoder identity write_mp4 returns, without encoding anything.
std::string mp4_encoder_identity();

}  // namespace fuseproof::e2e
